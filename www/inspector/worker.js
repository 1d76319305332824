// The inspector's engine, in a Web Worker so loading the model, embedding and index builds
// never block the page. Messages: {id, method, args} → {id, result} | {id, error, code}.
import { Mnemo, IndexedDbStorage, Embedder, fetchModel } from "/pkg/src/entry-browser.js";

let memory;

async function open() {
  const { model, tokenizer } = await fetchModel(
    { model: "/model/model.onnx", tokenizer: "/model/tokenizer.json" },
    {
      onProgress: ({ file, loaded, total, cached }) =>
        postMessage({ progress: { label: cached ? `${file} (cached)` : file, got: loaded, total } }),
    },
  );
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
  // The inspector is a person at the keyboard: the user, or an administrator when they say so.
  setFact: (ns, fact) => memory.setFact(ns, { origin: fact.source === "admin" ? "admin" : "user", ...fact }),
  facts: (ns) => memory.facts(ns, { all: true }),
  factHistory: (ns, key) => memory.factHistory(ns, key),
  rollbackFact: (ns, key, version) => memory.rollbackFact(ns, key, version),
  addRule: (ns, text) => memory.addRule(ns, text, { origin: "user" }),
  rules: (ns) => memory.rules(ns, ["active", "candidate"]),
  maintain: () => memory.maintain(),
  signals: (ns, signals) => memory.signals(ns, signals),
  nightly: (ns) => memory.nightly(ns),
  nightlyLog: (ns) => memory.nightlyLog(ns),
  context: (ns, request, now) => memory.context(ns, request, { now }),
  expand: (ns, id) => memory.expand(ns, id),
  // The mail agent's 90 days, reporting each night; answers where it ended and the new email.
  replayScenario: async () => {
    const sc = Mnemo.demoScenario();
    const done = await memory.replayScenario(sc, {
      onNight: (day) => postMessage({ scenario: { day: day.day, days: sc.days.length } }),
    });
    return { ...done, namespace: sc.namespace, incoming: sc.incoming, incomingAt: sc.incomingAt };
  },
  stats: (ns) => memory.stats(ns),
  observations: (ns) => memory.observations(ns, ["open"]),
  feedback: (ns, id, verdict) => memory.feedback(ns, id, verdict),
  forget: (ns) => memory.forgetNamespace(ns),
  erase: (ns, what) => memory.erase(ns, what),
  correct: (ns, id, fix) => memory.correct(ns, id, fix),
  exportEncrypted: (ns, passphrase) => memory.exportEncrypted(ns, passphrase),
  exportReadable: (ns) => memory.exportReadable(ns),
  importEncrypted: (ns, passphrase, bytes) => memory.importEncrypted(ns, passphrase, bytes),
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
