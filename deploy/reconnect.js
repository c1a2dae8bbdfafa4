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
// Until that run has finished (the server's script_finished message on the new websocket),
// the page takes no click or key (data-lab-redrawing on the document): a control used
// meanwhile would ask for a rerun of a fragment the new process has not drawn yet, which
// it drops, and a student's tapped answer would vanish when the page is drawn. After
// REDRAW_AT_MOST ms the page takes input again whatever happened.
(() => {
  "use strict";
  if (window.__attentionLabReconnect) return;
  window.__attentionLabReconnect = true;
  const REDRAW_AT_MOST = 15000;
  const GUARD = "data-lab-redrawing";
  let last = null; // the connection state seen last
  let lost = false; // the websocket was connected once and dropped since
  let sends = 0; // messages the page has sent on its websockets
  let sendsAtLoss = 0; // ... when the connection dropped
  let ending = null; // the timer that ends a redraw's guard at the latest
  const listened = new WeakSet(); // the websockets whose messages this reads

  const style = document.createElement("style");
  style.textContent =
    `html[${GUARD}] { cursor: progress; }` +
    ` html[${GUARD}] [data-testid='stApp'] { pointer-events: none; }`;
  document.head.appendChild(style);

  function guard(on) {
    clearTimeout(ending);
    if (on) {
      document.documentElement.setAttribute(GUARD, "");
      ending = setTimeout(() => guard(false), REDRAW_AT_MOST);
    } else {
      document.documentElement.removeAttribute(GUARD);
    }
  }

  // Keys too: pointer-events stops the pointer only. (The R key below is not trusted.)
  for (const type of ["keydown", "keypress", "keyup", "beforeinput", "input"]) {
    window.addEventListener(
      type,
      (event) => {
        if (event.isTrusted && document.documentElement.hasAttribute(GUARD)) {
          event.stopImmediatePropagation();
          event.preventDefault();
        }
      },
      true,
    );
  }

  // Whether a server message (a ForwardMsg, protobuf) says a script run ended: its field 6,
  // script_finished, holds any status but 2 (ended early for another run).
  function runEnded(data) {
    const bytes = new Uint8Array(data);
    let at = 0;
    const varint = () => {
      let value = 0;
      for (let shift = 0; at < bytes.length; shift += 7) {
        const byte = bytes[at++];
        value += (byte & 127) * 2 ** shift;
        if (byte < 128) break;
      }
      return value;
    };
    while (at < bytes.length) {
      const key = varint();
      const wire = key % 8;
      if (wire === 0) {
        const value = varint();
        if (Math.floor(key / 8) === 6) return value !== 2;
      } else if (wire === 2) at += varint();
      else if (wire === 1) at += 8;
      else if (wire === 5) at += 4;
      else return false;
    }
    return false;
  }

  // The frontend's own request is a message it sends on the new websocket before it
  // writes the CONNECTED state on the page: count them. The first message sent on a
  // websocket also starts the reading of its answers.
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (...args) {
    sends += 1;
    if (!listened.has(this)) {
      listened.add(this);
      this.addEventListener("message", (event) => {
        const guarded = document.documentElement.hasAttribute(GUARD);
        if (guarded && event.data instanceof ArrayBuffer && runEnded(event.data)) guard(false);
      });
    }
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
      guard(true);
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
      if (change.target.getAttribute("data-testid") === "stApp") look(change.target);
    }
  }).observe(document.documentElement, {
    subtree: true,
    attributes: true,
    attributeFilter: ["data-test-connection-state"],
  });
})();
