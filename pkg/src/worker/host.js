// The Web Worker behind `MnemoWorker` (./client.js): opens a `Mnemo` on the storage and model
// the page described, then runs each call it is sent. Messages in: {id, open: options} or
// {id, method, args}; out: {id, result} | {id, error, code} | {progress}. Loading the wasm,
// the model and every embedding happen here, never on the page's thread.
import { Mnemo, IndexedDbStorage, MemoryStorage, Embedder, fetchModel } from "../entry-browser.js";

let memory;

async function storageFor(s) {
  if (s === undefined || s === "memory") return new MemoryStorage();
  if (typeof s === "object" && typeof s.indexedDb === "string") return IndexedDbStorage.open(s.indexedDb);
  throw Object.assign(new Error('storage is "memory" or {indexedDb: "name"} in a worker (other storages stay on the page: use Mnemo)'), {
    code: "INVALID_INPUT",
  });
}

async function open({ storage, model, ...options }) {
  let embedder;
  if (model) {
    const bytes =
      model.modelBytes && model.tokenizerBytes
        ? { model: model.modelBytes, tokenizer: model.tokenizerBytes }
        : await fetchModel(
            { model: model.model, tokenizer: model.tokenizer },
            { onProgress: (p) => postMessage({ progress: p }) },
          );
    embedder = new Embedder(new Uint8Array(bytes.model), new Uint8Array(bytes.tokenizer));
  }
  const modelId = embedder?.modelId ?? options.vectorModel ?? "";
  memory = await Mnemo.open(await storageFor(storage), { ...options, embedder });
  return { modelId };
}

onmessage = async ({ data }) => {
  const { id } = data;
  try {
    let result;
    if (data.open) result = await open(data.open);
    else if (data.method === "demoScenario") result = Mnemo.demoScenario(...data.args);
    else if (!memory) throw Object.assign(new Error("the worker's engine is not open"), { code: "INVALID_INPUT" });
    else if (typeof memory[data.method] !== "function" || data.method.startsWith("#")) {
      throw Object.assign(new Error(`no method ${data.method}`), { code: "INVALID_INPUT" });
    } else result = await memory[data.method](...data.args);
    postMessage({ id, result });
  } catch (e) {
    postMessage({ id, error: e?.message ?? String(e), code: e?.code ?? "ERROR" });
  }
};
postMessage({ listening: true });
