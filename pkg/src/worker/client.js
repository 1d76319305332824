// `MnemoWorker`: the `Mnemo` API with the engine in a Web Worker the package starts itself, so
// loading the model and embedding (CPU-bound, hundreds of milliseconds) never block the page.
// Every method takes the same arguments and resolves to the same values as `Mnemo`'s.
//
// What cannot cross into a worker (structured clone carries data, not functions or objects
// with methods): the storage is named, not passed — "memory" or {indexedDb: "name"}; the model
// is URLs ({model, tokenizer}, fetched and cached in the worker) or bytes ({modelBytes,
// tokenizerBytes}, transferred); callbacks (`embed`, `phrase`, `countTokens`, `now`, and
// `replayScenario`'s `onNight`) are not supported — use `Mnemo` on the page for those, and in
// MV3 service workers, which cannot start workers.

/** The instance methods of `Mnemo` the worker runs (all asynchronous here). */
export const METHODS = [
  "open", "close", "remember", "ingest", "recall", "context", "taskStart", "taskStep", "workingMemory", "taskEnd",
  "expand", "setStatus", "timeline", "setFact", "fact", "facts", "factHistory", "rollbackFact",
  "addRule", "rules", "setRuleStatus", "assertTriple", "triples", "recallObservations", "signal", "signals", "observe", "observations", "feedback", "promote",
  "outcome", "outcomeReport", "nightly", "replayScenario", "nightlyLog", "stats", "recency",
  "maintain", "forgetNamespace", "erase", "correct", "requestErasure", "exportReadable",
  "exportEncrypted", "importEncrypted", "reembed", "quarantined",
];

export class MnemoWorker {
  #worker;
  #pending = new Map();
  #next = 0;
  #ready;
  #terminated = false;

  /**
   * Starts the worker and opens the engine in it. `options`: `storage` ("memory", the
   * default, or {indexedDb: name}); `model` ({model: url, tokenizer: url} or {modelBytes,
   * tokenizerBytes}); `onProgress` (the model download's progress events); and `Mnemo.open`'s
   * data options (`vectorModel`, `dim`, `snapshotAfter`, `snapshotChunk`).
   */
  static async open({ onProgress, workerUrl, ...options } = {}) {
    for (const f of ["embed", "phrase", "countTokens", "now"]) {
      if (typeof options[f] === "function") {
        throw Object.assign(new Error(`option ${f} is a function, which cannot cross into a worker: use Mnemo on this thread`), {
          code: "INVALID_INPUT",
        });
      }
    }
    const m = new MnemoWorker();
    m.#worker = new Worker(workerUrl ?? new URL("./host.js", import.meta.url), { type: "module" });
    let listening, failed;
    m.#ready = new Promise((resolve, reject) => ((listening = resolve), (failed = reject)));
    m.#ready.catch(() => {}); // observed by each call
    m.#worker.onmessage = ({ data }) => {
      if (data.listening) return listening();
      if (data.progress) return onProgress?.(data.progress);
      const p = m.#pending.get(data.id);
      if (!p) return;
      m.#pending.delete(data.id);
      if ("error" in data) p.reject(Object.assign(new Error(data.error), { code: data.code }));
      else p.resolve(data.result);
    };
    m.#worker.onerror = (e) => {
      const err = Object.assign(new Error(`the mnemo worker failed: ${e.message ?? "see the console"}`), { code: "WORKER" });
      failed(err); // the module did not load
      for (const p of m.#pending.values()) p.reject(err);
      m.#pending.clear();
    };
    const transfer = [options.model?.modelBytes?.buffer, options.model?.tokenizerBytes?.buffer].filter(Boolean);
    const { modelId } = await m.#post({ open: options }, transfer);
    m.modelId = modelId;
    return m;
  }

  async #post(message, transfer = []) {
    await this.#ready;
    if (this.#terminated) {
      throw Object.assign(new Error("the mnemo worker was terminated: open a new MnemoWorker"), { code: "WORKER" });
    }
    return new Promise((resolve, reject) => {
      const id = ++this.#next;
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, ...message }, transfer);
    });
  }

  /** `Mnemo.demoScenario`, computed in the worker. */
  demoScenario(options) {
    return this.#post({ method: "demoScenario", args: [options] });
  }

  // Each of Mnemo's methods, forwarded (defined in the class body: they use #post).
  static {
    for (const name of METHODS) {
      this.prototype[name] = function (...args) {
        const fn = args.some((a) => a && typeof a === "object" && Object.values(a).some((v) => typeof v === "function"));
        if (fn) {
          return Promise.reject(Object.assign(new Error(`${name}: callbacks cannot cross into a worker`), { code: "INVALID_INPUT" }));
        }
        return this.#post({ method: name, args });
      };
    }
  }

  /** Stops the worker; pending calls are rejected. */
  terminate() {
    this.#terminated = true;
    this.#worker.terminate();
    const err = Object.assign(new Error("the mnemo worker was terminated"), { code: "WORKER" });
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}

