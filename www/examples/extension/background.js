// The extension's service worker: nothing to do yet (memory lives in the popup, which loads
// wasm and the model). It gives the extension a stable worker that tools can find.
chrome.runtime.onInstalled.addListener(() => {});
