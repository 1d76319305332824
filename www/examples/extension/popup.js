// The extension's memory: multilingual-e5-small from the extension bundle (model/), the engine
// on chrome.storage.local. `tools/build-extension` copies the package and the model in.
import { Mnemo, ChromeStorage, Embedder } from "./mnemo/src/entry-browser.js";

const NS = "me";
const status = document.getElementById("status");

async function bytes(path) {
  return new Uint8Array(await (await fetch(chrome.runtime.getURL(path))).arrayBuffer());
}

// The all-4-bit graph: ~75 MB once loaded (model.onnx is faster but ~320 MB).
const embedder = new Embedder(await bytes("model/model.q4.onnx"), await bytes("model/tokenizer.json"));
const memory = await Mnemo.open(await ChromeStorage.open(), { embedder });
status.textContent = "ready";

async function remember(text) {
  return memory.remember(NS, { text, kind: "note" });
}

async function recall(text) {
  return memory.recall(NS, { text, k: 5 });
}

document.getElementById("add").onsubmit = async (e) => {
  e.preventDefault();
  const r = await remember(e.target.text.value);
  status.textContent = r.stored ? `remembered (#${r.id})` : `not kept: ${r.reason}`;
  e.target.reset();
};

document.getElementById("ask").onsubmit = async (e) => {
  e.preventDefault();
  const { hits } = await recall(e.target.text.value);
  document.getElementById("hits").replaceChildren(
    ...hits.map((h) => {
      const li = document.createElement("li");
      li.textContent = h.episode.text + " ";
      const s = document.createElement("small");
      s.textContent = `score ${h.explanation.finalScore.toFixed(3)} (cosine ${h.explanation.cosine.toFixed(2)}, bm25 ${h.explanation.bm25.toFixed(2)})`;
      li.append(s);
      return li;
    }),
  );
};

// For tests and the console.
globalThis.memory = { remember, recall, timeline: () => memory.timeline(NS) };
document.title = "mnemo ready";
