// One Web Worker of tools/bench/ingest-chromium.mjs: its own wasm instance and embedder.
// Messages in: {model, tokenizer} (URLs) to load; {texts} to embed in batches of 16.
// Messages out: {ready: true} once loaded and warmed; {done: n} once its texts are embedded.
import init, { Embedder } from "/pkg/wasm/mnemo.js";

let embedder;
self.onmessage = async ({ data }) => {
  try {
    if (data.model) {
      await init({ module_or_path: "/pkg/wasm/mnemo_bg.wasm" });
      const bytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
      embedder = new Embedder(await bytes(data.model), await bytes(data.tokenizer), {
        name: "e5",
        cacheCapacity: 0,
      });
      embedder.embed(["warm up the plan"], "passage");
      self.postMessage({ ready: true });
    } else {
      for (let i = 0; i < data.texts.length; i += 16) {
        embedder.embed(data.texts.slice(i, i + 16), "passage");
      }
      self.postMessage({ done: data.texts.length });
    }
  } catch (e) {
    self.postMessage({ error: String(e?.stack ?? e) });
  }
};
