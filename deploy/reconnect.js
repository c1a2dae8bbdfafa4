// Attention Lab behind deploy/serve: nginx adds this script to every page it serves.
//
// When a replica dies, Streamlit's frontend reconnects its websocket by itself and nginx
// sends it to the same replica, restarted (or to another one if it stays down). The page
// stays on screen, but the new process holds no session for it. Streamlit 1.67's frontend
// asks for a full run after a reconnect only if the page has a fragment on a timer (or a
// run was under way); otherwise it does not, and every control of the app lives in an
// st.fragment, whose rerun a process that has never drawn it drops without a word
// (AppSession.request_rerun: "The fragment ... does not exist anymore"): the student would
// see the page as it was, and nothing would answer a slider.
//
// So after a reconnect that the frontend did not follow with a run request, this asks for
// one full run, as Streamlit's own "R" key does: the URL's query string and the widgets'
// values restore the same view on the new replica. A second request on top of the
// frontend's own would double the work of a restarted replica that a whole share of the
// class reconnects to at once.
//
// Until that run has finished, the page takes no click or key (data-lab-redrawing on the
// document): a control used meanwhile would ask for a rerun of a fragment the new process
// has not drawn yet, which it drops, and a student's tapped answer would vanish when the
// page is drawn. After REDRAW_AT_MOST ms the page takes input again whatever happened.
(() => {
  "use strict";
  if (window.__attentionLabReconnect) return;
  window.__attentionLabReconnect = true;
  let last = null; // the connection state seen last
  let lost = false; // the websocket was connected once and dropped since
  let sends = 0; // messages the page has sent on its websockets
  let sendsAtLoss = 0; // ... when the connection dropped
  let redrawn = null; // the timer that ends a redraw's wait at the latest
  const REDRAW_AT_MOST = 15000;

  const style = document.createElement("style");
  style.textContent =
    "html[data-lab-redrawing] { cursor: progress; }" +
    " html[data-lab-redrawing] [data-testid='stApp'] { pointer-events: none; }";
  document.head.appendChild(style);

  function redrawing(on) {
    clearTimeout(redrawn);
    if (on) {
      document.documentElement.setAttribute("data-lab-redrawing", "");
      redrawn = setTimeout(() => redrawing(false), REDRAW_AT_MOST);
    } else {
      document.documentElement.removeAttribute("data-lab-redrawing");
    }
  }
  // Keys too: pointer-events stops the pointer only.
  for (const type of ["keydown", "keypress", "keyup", "input", "beforeinput"]) {
    window.addEventListener(
      type,
      (event) => {
        if (event.isTrusted && document.documentElement.hasAttribute("data-lab-redrawing")) {
          event.stopImmediatePropagation();
          event.preventDefault();
        }
      },
      true,
    );
  }

  // The frontend's own request is a message it sends on the new websocket before it
  // writes the CONNECTED state on the page: count them.
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (...args) {
    sends += 1;
    return send.apply(this, args);
  };

  function rerun() {
    for (const type of ["keydown", "keyup"]) {
      const event = new KeyboardEvent(type, { key: "r", code: "KeyR", bubbles: true });
      // Streamlit's hotkey library reads the legacy keyCode, which the constructor ignores.
      Object.defineProperty(event, "keyCode", { get: () => 82 });
      Object.defineProperty(event, "which", { get: () => 82 });
      document.body.dispatchEvent(event);
    }
  }

  // Streamlit writes its connection state on the app's root element.
  function look(app) {
    const state = app.getAttribute("data-test-connection-state");
    if (!state || state === last) return;
    if (last === "CONNECTED") {
      lost = true;
      sendsAtLoss = sends;
    }
    last = state;
    if (lost && state === "CONNECTED") {
      lost = false;
      redrawing(true);
      if (sends === sendsAtLoss) rerun(); // the frontend asked for nothing
    }
  }

  // Its first state, then every change, watched on the whole document (React may draw
  // the root element anew).
  const first = setInterval(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app) {
      clearInterval(first);
      look(app);
    }
  }, 50);
  new MutationObserver((changes) => {
    for (const change of changes) {
      if (change.target.getAttribute("data-testid") !== "stApp") continue;
      if (change.attributeName === "data-test-connection-state") look(change.target);
      // A run that was under way has ended: the page is drawn anew.
      else if (change.oldValue === "running") redrawing(false);
    }
  }).observe(document.documentElement, {
    subtree: true,
    attributes: true,
    attributeOldValue: true,
    attributeFilter: ["data-test-connection-state", "data-test-script-state"],
  });
})();
