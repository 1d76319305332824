// The inspector's engine, in a Web Worker so loading the model, embedding and index builds
// never block the page. Messages: {id, method, args} → {id, result} | {id, error, code}.
import { Mnemo, IndexedDbStorage, Embedder } from "/pkg/src/entry-browser.js";

let memory;

async function fetchBytes(url, label) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} (run tools/inspector, which serves the model)`);
  const total = Number(res.headers.get("content-length")) || 0;
  const reader = res.body.getReader();
  const parts = [];
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.length;
    postMessage({ progress: { label, got, total } });
  }
  const out = new Uint8Array(got);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function open() {
  const model = await fetchBytes("/model/model.onnx", "model");
  const tokenizer = await fetchBytes("/model/tokenizer.json", "tokenizer");
  postMessage({ progress: { label: "compiling the model", got: 0, total: 0 } });
  const embedder = new Embedder(model, tokenizer);
  const modelId = embedder.modelId; // read before the engine takes the embedder over
  memory = await Mnemo.open(await IndexedDbStorage.open("mnemo-inspector"), { embedder });
  return { model: modelId };
}

const methods = {
  open,
  remember: (ns, episode) => memory.remember(ns, episode),
  recall: (ns, query) => memory.recall(ns, query),
  timeline: (ns) => memory.timeline(ns, { limit: 500 }),
  setStatus: (ns, id, status) => memory.setStatus(ns, id, status),
  recency: (ages) => ages.map(([days, tier]) => memory.recency(days, tier)),
  setFact: (ns, fact) => memory.setFact(ns, fact),
  facts: (ns) => memory.facts(ns, { all: true }),
  factHistory: (ns, key) => memory.factHistory(ns, key),
  rollbackFact: (ns, key, version) => memory.rollbackFact(ns, key, version),
  addRule: (ns, text) => memory.addRule(ns, text),
  rules: (ns) => memory.rules(ns),
  maintain: () => memory.maintain(),
  forget: (ns) => memory.forgetNamespace(ns),
};

onmessage = async ({ data: { id, method, args } }) => {
  try {
    postMessage({ id, result: await methods[method](...args) });
  } catch (e) {
    postMessage({ id, error: e.message, code: e.code ?? "ERROR" });
  }
};
// Messages sent before this module finished loading (wasm included) may be lost: say when
// it is listening.
postMessage({ listening: true });
