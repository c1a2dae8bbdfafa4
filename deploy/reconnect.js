// Attention Lab behind deploy/serve: nginx adds this script to every page it serves.
//
// When a replica dies, Streamlit's frontend reconnects its websocket by itself and nginx
// sends it to another replica (or to the same one, restarted). The page stays on screen,
// but the new process holds no session for it, and Streamlit 1.67's frontend does not rerun
// a page that had run before the connection dropped. Every control of the app lives in an
// st.fragment, and a fragment rerun the new process has never drawn is dropped without a
// word (AppSession.request_rerun: "The fragment ... does not exist anymore"): the student
// would see the page as it was, and nothing would answer a slider.
//
// So after every reconnect this asks for one full rerun, as Streamlit's own "R" key does:
// the URL's query string and the widgets' values restore the same view on the new
// replica. (After a reconnect to the same, still running, process the rerun is harmless.)
(() => {
  "use strict";
  if (window.__attentionLabReconnect) return;
  window.__attentionLabReconnect = true;
  let last = null; // the connection state seen last
  let lost = false; // the websocket was connected once and dropped since

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
  setInterval(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute("data-test-connection-state");
    if (!state || state === last) return;
    if (last === "CONNECTED") lost = true;
    last = state;
    if (lost && state === "CONNECTED") {
      lost = false;
      rerun();
    }
  }, 200);
})();
