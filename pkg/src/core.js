// The engine for JS hosts: the synchronous wasm core over the host's asynchronous storage.
//
// A namespace is read from storage into the engine's in-memory mirror on first use, except its
// largest tables: episodes, vectors and snapshot chunks stay in storage (the engine keeps what
// ranking needs of them; loading is handed the snapshot one part at a time and only the
// episodes and vectors newer than it), and a call that reads there fails
// inside the engine with NEED_RECORDS, is handed what it asked for, and runs again — it has
// written nothing by then. What a call was handed is dropped when it ends. Every
// mutation runs in the core, then its write batches are awaited on the storage before the
// call resolves: an acknowledged write is stored. If storage fails, the namespace is dropped
// from memory and re-read on next use, so memory never runs ahead of storage. Calls are
// queued, one at a time, in call order.
//
// One context at a time: two tabs, or an extension page and its service worker, each with its
// own mirror over the same storage would interleave their writes and each miss the other's.
// Where the Web Locks API exists (browsers, extensions, their workers), `open` takes an
// exclusive lock named by the storage (`storage.lockName`) and holds it until `close()`; a
// second context is refused with code LOCKED, or waits with `{waitForLock: true}`.

let wasm = null;

/** Called once by each entry point with the initialised wasm-bindgen module. */
export function setWasm(module) {
  wasm = module;
}

function need() {
  if (!wasm) throw new Error("mnemo's wasm module is not initialised: import from \"mnemo\"");
  return wasm;
}

const PAGE = 512;
// Snapshot chunks read per storage call while a part is handed over (about 2 MB of 120 KiB
// chunks).
const PART_PAGE = 16;
const parse = (s) => JSON.parse(s);

export class Mnemo {
  #engine;
  #storage;
  #loaded = new Set();
  #queue = Promise.resolve();
  #clock;
  #embed;
  #unlock = null; // releases the Web Lock held since open
  #closed = false;

  /**
   * Opens an engine on `storage` ({get, scan, write}; see the adapters). `options`:
   * `embedder` (an `Embedder` from model bytes; moved into the engine), or `vectorModel` and
   * `dim` when the host supplies vectors — per call (`{vector}`) or through
   * `embed: async (texts, role) => vectors` (e.g. a Workers AI binding; role is "query" or
   * "passage"); `now` (() => ms, default Date.now); `snapshotAfter`, `snapshotChunk`;
   * `phrase` ((prompt, maxTokens) => string, synchronous: a language model that may reword
   * observations; its answers are checked and the engine's own words kept when one fails);
   * `countTokens` ((text) => number, synchronous: the host model's tokenizer, for exact
   * context budgets; the engine's documented estimate otherwise); `waitForLock` (wait for
   * another context holding the storage to close it, instead of failing with LOCKED).
   */
  static async open(storage, options = {}) {
    const m = new Mnemo();
    const w = need();
    const name = storage.lockName;
    if (name && globalThis.navigator?.locks) await m.#lock(name, options.waitForLock === true);
    m.#storage = storage;
    m.#clock = options.now ?? (() => Date.now());
    m.#engine = new w.WasmEngine(
      JSON.stringify({
        vectorModel: options.vectorModel ?? "",
        dim: options.dim ?? 384,
        snapshotAfter: options.snapshotAfter,
        snapshotChunk: options.snapshotChunk,
      }),
    );
    if (options.embedder) m.#engine.attachEmbedder(options.embedder);
    if (options.phrase) m.#engine.attachPhraser(options.phrase);
    if (options.countTokens) m.#engine.attachTokenCounter(options.countTokens);
    m.#embed = options.embed ?? null;
    return m;
  }

  // Takes the exclusive Web Lock `name` (module notes); held until close().
  async #lock(name, wait) {
    let granted;
    const answered = new Promise((resolve) => (granted = resolve));
    navigator.locks.request(name, wait ? {} : { ifAvailable: true }, (lock) => {
      granted(lock !== null);
      return lock ? new Promise((release) => (this.#unlock = release)) : null;
    });
    if (!(await answered)) {
      const e = new Error(
        `another context (a tab, a worker, the extension's service worker) has this storage open ` +
          `(lock ${JSON.stringify(name)}); one context at a time keeps writes from interleaving: ` +
          `close it there (mnemo.close()), or open with {waitForLock: true} to wait for it`,
      );
      e.code = "LOCKED";
      throw e;
    }
  }

  /**
   * Waits for the calls already made, then lets go of the storage (and of its lock, so another
   * context may open it). Later calls reject with code CLOSED.
   */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    this.#unlock?.();
    this.#unlock = null;
  }

  #run(ns, fn) {
    if (this.#closed) {
      const e = new Error("this Mnemo was closed: open it again (Mnemo.open) to use the storage");
      e.code = "CLOSED";
      return Promise.reject(e);
    }
    const next = this.#queue.then(async () => {
      if (ns !== null && !this.#loaded.has(ns)) await this.#load(ns);
      try {
        const result = await this.#complete(fn);
        const batches = this.#engine.takeWrites();
        try {
          for (const ops of batches) await this.#storage.write(ops);
          // An erasure asked for deleted bytes to leave storage: log adapters compact.
          if (this.#engine.takeVacuum()) await this.#storage.compact?.();
        } catch (e) {
          if (ns !== null) {
            this.#engine.reset(ns);
            this.#loaded.delete(ns);
          }
          throw e;
        }
        return result;
      } finally {
        this.#engine.settle();
      }
    });
    this.#queue = next.catch(() => {});
    return next;
  }

  // Runs `fn` until it no longer needs records from storage (module notes).
  async #complete(fn) {
    for (let round = 0; ; round++) {
      try {
        return fn(this.#engine);
      } catch (e) {
        if (e?.code !== "NEED_RECORDS" || round >= 16) throw e;
        await this.#fetch(this.#engine.takeNeeds());
      }
    }
  }

  // Every [key, value] under `prefix` after `after`, page by page.
  async #range(prefix, after) {
    const keys = [];
    const values = [];
    for (;;) {
      const page = await this.#storage.scan(prefix, after, PAGE);
      for (const [k, v] of page) {
        keys.push(k);
        values.push(v);
      }
      if (page.length < PAGE) return { keys, values };
      after = page[page.length - 1][0];
    }
  }

  // Hands the engine what it needs: single records (null when absent) and ranges.
  async #fetch(needs) {
    const single = needs.filter((n) => n.key);
    if (single.length) {
      const values = await Promise.all(single.map((n) => this.#storage.get(n.key)));
      this.#engine.hold(single.map((n) => n.key), values.map((v) => v ?? null));
    }
    for (const n of needs.filter((n) => n.prefix)) {
      const { keys, values } = await this.#range(n.prefix, n.after);
      this.#engine.holdRange(n.prefix, n.after, keys, values);
    }
  }

  async #load(ns) {
    const w = need();
    // Episodes, vectors and the snapshot stay in storage: loading asks for what it reads.
    this.#engine.makeLazy(ns);
    try {
      for (const prefix of w.WasmEngine.eagerPrefixes(ns)) {
        const { keys, values } = await this.#range(prefix, null);
        for (let i = 0; i < keys.length; i += PAGE) {
          this.#engine.preload(keys.slice(i, i + PAGE), values.slice(i, i + PAGE));
        }
      }
      // The snapshot's head, and the vector records of the rows it did not store (quantised
      // as they come); then what was fetched goes before the parts come in.
      const parts = await this.#complete((e) => e.loadParts(ns));
      this.#engine.settle();
      // The snapshot, one part at a time, its chunks a page at a time: the JS heap holds one
      // page, wasm memory the part being decoded.
      for (const prefix of parts) {
        for (let after = null; ; ) {
          const page = await this.#storage.scan(prefix, after, PART_PAGE);
          this.#engine.loadChunks(ns, page.map(([, v]) => v));
          if (page.length < PART_PAGE) break;
          after = page[page.length - 1][0];
        }
        this.#engine.loadPartEnd(ns);
      }
      // The records past the snapshot and those changed since.
      await this.#fetch(await this.#complete((e) => e.loadNeeds(ns)));
      await this.#complete((e) => e.load(ns));
    } catch (e) {
      this.#engine.reset(ns);
      throw e;
    } finally {
      this.#engine.settle();
    }
    this.#loaded.add(ns);
  }

  /** Loads namespace `ns` now; resolves to how it was opened ({from: "snapshot" | "records"}). */
  open(ns) {
    return this.#run(ns, (e) => parse(e.opened(ns)));
  }

  /**
   * Remembers an episode: `{text, createdAt?, outcome?, verdict?, agent?, kind?, entities?,
   * tags?, tool?, stage?, errorClass?, entityType?, source?, surprise?, tier?}`; `vector` when
   * the host embeds. Resolves to `{stored, id?, importance?, reason}` once stored.
   */
  async remember(ns, episode, { vector } = {}) {
    const timed = ["createdAt", "created_at", "ts"].some((k) => episode[k] !== undefined);
    const e = timed ? { ...episode } : { ...episode, createdAt: this.#clock() };
    // Passage vectors go through JSON: a Float32Array would stringify as an object.
    if (Array.isArray(e.passages)) e.passages = e.passages.map((p) => ({ ...p, vector: Array.from(p.vector ?? []) }));
    const v = vector ? Float32Array.from(vector) : await this.#hostVector(episode.text, "passage");
    return this.#run(ns, (en) => parse(en.remember(ns, JSON.stringify(e), v)));
  }

  /**
   * Stores many episodes, all or nothing: `episodes` is an array of episode objects (as
   * `remember` takes them, each with its time and optionally an `id`) or JSON Lines text.
   * Every one is checked and embedded first, then one atomic batch stores them all; one
   * imported before (the same `id`, or else the same line) is skipped. `origin` is the most
   * trusted origin a line may claim: "unknown" (the default) unless you vouch for the lines.
   * Resolves to `{stored: [id], discarded: [{line, reason}], duplicates: [{line, id}]}`.
   */
  async ingest(ns, episodes, { origin = "unknown", now } = {}) {
    const jsonl = typeof episodes === "string" ? episodes : episodes.map((e) => JSON.stringify(e)).join("\n");
    const at = now ?? this.#clock();
    let flat;
    if (this.#embed) {
      // One vector per non-blank line, as the engine counts lines (a bad line: the engine says
      // which, so nothing is embedded).
      const lines = jsonl.replace(/^\uFEFF/, "").split("\n").map((l) => l.replace(/\r$/, "")).filter((l) => l.trim() !== "");
      let texts;
      try {
        texts = lines.map((l) => JSON.parse(l).text);
      } catch {
        texts = undefined;
      }
      if (texts && texts.every((t) => typeof t === "string" && t.trim() !== "")) {
        const vectors = texts.length ? await this.#embed(texts, "passage") : [];
        flat = Float32Array.from(vectors.flatMap((v) => Array.from(v)));
      }
    }
    return this.#run(ns, (en) => parse(en.ingest(ns, jsonl, origin, at, flat)));
  }

  // The host embedder's vector for `text`, when one was given and no vector was passed.
  async #hostVector(text, role) {
    if (!this.#embed || typeof text !== "string" || text.trim() === "") return undefined;
    const [v] = await this.#embed([text], role);
    return Float32Array.from(v);
  }

  /**
   * Recalls: `query` is a string or `{text, k?, filter?, touch?, timeExpressions?}`. Resolves
   * to `{hits: [{episode, explanation}], window, windowDropped}`.
   */
  async recall(ns, query, { vector, now } = {}) {
    const q = typeof query === "string" ? { text: query } : query;
    const at = now ?? this.#clock();
    const v = vector ? Float32Array.from(vector) : await this.#hostVector(q.text, "query");
    return this.#run(ns, (e) => parse(e.recall(ns, JSON.stringify(q), at, v)));
  }

  /**
   * The context for a task, within a token budget: `{sections, withheld, tokens, disclosure,
   * retrievalId, budget, text}`. `request` is the task text or `{task, taskId?, budget?,
   * total?, system?, conversation?, tools?, level?}`.
   */
  async context(ns, request, { vector, now } = {}) {
    const r = typeof request === "string" ? { task: request } : { ...request };
    const at = now ?? this.#clock();
    const v = vector ?? r.vector ?? (await this.#hostVector(r.task, "query"));
    if (v) r.vector = Array.from(v);
    return this.#run(ns, (e) => parse(e.context(ns, JSON.stringify(r), at)));
  }

  /** Starts a task's working memory (in this process only), capped at `cap` tokens (4,000). */
  taskStart(ns, id, content, { cap } = {}) {
    return this.#run(null, (e) => parse(e.taskStart(ns, id, content, cap ?? 0)));
  }

  /** Adds a step (`reasoning`, `tool-result`, `approval`, `note`); the oldest are summarised past the cap. */
  taskStep(ns, id, kind, text) {
    return this.#run(null, (e) => parse(e.taskStep(ns, id, kind, text)));
  }

  /** A task's working memory as it is now. */
  workingMemory(ns, id) {
    return this.#run(null, (e) => parse(e.workingMemory(ns, id)));
  }

  /** Ends a task: its working memory is discarded and returned one last time. */
  taskEnd(ns, id) {
    return this.#run(null, (e) => parse(e.taskEnd(ns, id)));
  }

  /** The full text behind an id a context listed (`episode:42`, `rule:3`, `fact:KEY`, `transcript:2`…). */
  expand(ns, id) {
    return this.#run(ns, (e) => e.expand(ns, id));
  }

  /** Sets an episode's status: raw, active, superseded or rejected. */
  setStatus(ns, id, status) {
    return this.#run(ns, (e) => e.setStatus(ns, id, status));
  }

  /** Episodes created before `before` (ms), oldest first. */
  timeline(ns, { before = Number.MAX_SAFE_INTEGER, limit = 100 } = {}) {
    return this.#run(ns, (e) => parse(e.timeline(ns, before, limit)));
  }

  /**
   * Sets a fact `{key, value, source?, origin?, confidence?, policy?, ttlMs?}`. Unlabelled input
   * is source "implicit", origin "unknown"; only origin "user" may write "explicit" facts and
   * "admin" "admin" ones, and an untrusted origin never replaces what a trusted one set.
   */
  setFact(ns, fact, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.setFact(ns, JSON.stringify(fact), at)));
  }

  /** The fact under `key`, or null. */
  fact(ns, key, { now, all = false } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.fact(ns, key, at, all)));
  }

  /** Every fact that holds now. */
  facts(ns, { now, all = false } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.facts(ns, at, all)));
  }

  /** Every version of a fact, oldest first. */
  factHistory(ns, key) {
    return this.#run(ns, (e) => parse(e.factHistory(ns, key)));
  }

  /** Makes an old version current again; resolves to the new version number. */
  rollbackFact(ns, key, version, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => e.rollbackFact(ns, key, version, at));
  }

  /** Adds a rule written by `origin` ("user" or "admin"; any other is refused); resolves to its id. */
  addRule(ns, text, { observation = "", status = "active", origin = "unknown", now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => e.addRule(ns, text, observation, status, origin, at));
  }

  /** Rules with one of `statuses` (all when empty). */
  rules(ns, statuses = []) {
    return this.#run(ns, (e) => parse(e.rules(ns, statuses)));
  }

  /** Changes a rule's status ("candidate", "active", "demoted"; "superseded" is the engine's). */
  setRuleStatus(ns, id, status, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => e.setRuleStatus(ns, id, status, at));
  }

  /**
   * Asserts `{subject, predicate, object, confidence?, source?}`: an agreeing assertion raises
   * the confidence, a contradicting one ends the current triple. Resolves to the triple as it
   * holds now.
   */
  assertTriple(ns, triple, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.assertTriple(ns, JSON.stringify(triple), at)));
  }

  /** The triples about `subject` that hold now (with `history`, the ended ones too). */
  triples(ns, subject, { history = false } = {}) {
    return this.#run(ns, (e) => parse(e.triples(ns, subject, history)));
  }

  /** Open observations ranked by cosine × exp(−λ·days) against `text` (or its `vector`). */
  recallObservations(ns, text, { k = 5, vector, now } = {}) {
    const at = now ?? this.#clock();
    const v = vector ? Float32Array.from(vector) : undefined;
    return this.#run(ns, (e) => parse(e.recallObservations(ns, text, v, k, at)));
  }

  /**
   * Stores one behaviour signal: `{ts, kind, agent, category?, situation?, detail?, before?,
   * after?, correction?, source?, trust?, episode?}` (`ts` ISO-8601 with the user's zone).
   * Resolves to `{id}` once stored.
   */
  signal(ns, signal) {
    return this.#run(ns, (e) => parse(e.signal(ns, JSON.stringify(signal))));
  }

  /**
   * Stores many signals, all or nothing: every one is checked first, then one atomic batch
   * stores them; one imported before (the same `id`, or else the same line) is skipped.
   * Resolves to `{ids, duplicates}`.
   */
  signals(ns, signals) {
    const jsonl = signals.map((s) => JSON.stringify(s)).join("\n");
    return this.#run(ns, (e) => parse(e.signals(ns, jsonl)));
  }

  /** Runs the pattern detector now (at most 3 new observations). */
  observe(ns, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.observe(ns, at)));
  }

  /** Observations with one of `statuses` (open, rejected, merged; all when empty). */
  observations(ns, statuses = []) {
    return this.#run(ns, (e) => parse(e.observations(ns, statuses)));
  }

  /** The user's verdict on an observation: "right" or "wrong" (wrong is final). */
  feedback(ns, id, verdict, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.feedback(ns, id, verdict, at)));
  }

  /** Promotes the observations that qualify to active rules. */
  promote(ns, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.promote(ns, at)));
  }

  /** How the task a recall served ended (`retrievalId` from the recall): success, failure, partial. */
  outcome(ns, retrievalId, outcome, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.outcome(ns, retrievalId, outcome, at)));
  }

  /** Entries that precede failures (harmful), successes (helpful) or nothing (rent). */
  outcomeReport(ns) {
    return this.#run(ns, (e) => parse(e.outcomeReport(ns)));
  }

  /**
   * The nightly job: compact (weekly, monthly), consolidate, detect, promote, evict, act on
   * outcomes, carry out queued erasures. With `budget` (work
   * units: records read or written) it stops early and the next call continues — call it
   * again until `done` (e.g. from a Durable Object alarm).
   */
  nightly(ns, { now, budget } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.nightly(ns, at, budget ?? -1)));
  }

  /**
   * The mail agent's seeded scenario (the engine's `demo::scenario`): Maria Rossi's facts
   * and `days` days of her mail — episodes, behaviour signals, the time of each night's
   * nightly run — then a new email from her client Marco Bertelli (`incoming`, at
   * `incomingAt`). The same scenario `mnemo demo` replays.
   */
  static demoScenario({ seed = 1, days = 90 } = {}) {
    return parse(need().demoScenario(seed, days));
  }

  /**
   * Replays a `demoScenario` into its namespace: the facts, then day by day the episodes, the
   * signals and that night's nightly run; `onNight(day, nightlyReport)` after each. Resolves
   * to `{episodes, stored, signals, nights, facts}`. Refuses a namespace that holds episodes.
   */
  async replayScenario(scenario, { onNight } = {}) {
    const ns = scenario.namespace;
    if ((await this.timeline(ns, { limit: 1 })).length) {
      throw Object.assign(new Error(`namespace "${ns}" already holds episodes: replay the scenario into an empty one`), { code: "INVALID_INPUT" });
    }
    const done = { episodes: 0, stored: 0, signals: 0, nights: 0, facts: 0 };
    for (const f of scenario.facts) {
      await this.setFact(ns, f, { now: scenario.factsAt });
      done.facts++;
    }
    for (const day of scenario.days) {
      for (const e of day.episodes) {
        done.stored += (await this.remember(ns, e)).stored ? 1 : 0;
        done.episodes++;
      }
      if (day.signals.length) done.signals += (await this.signals(ns, day.signals)).ids.length;
      const night = await this.nightly(ns, { now: day.night });
      done.nights++;
      onNight?.(day, night);
    }
    return done;
  }

  /** The reports of the last finished nightly runs, oldest first. */
  nightlyLog(ns) {
    return this.#run(ns, (e) => parse(e.nightlyLog(ns)));
  }

  /** Counts per tier and status, retrievable vs cold, and bytes: `{episodes, retrievable, cold, tiers, statuses, bytes}`. */
  stats(ns, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.stats(ns, at)));
  }

  /** The recency factor of the default scoring for `ageDays` at `tier` (decay, floored). */
  recency(ageDays, tier = 0) {
    return this.#engine.recency(ageDays, tier);
  }

  /**
   * The background step for the loaded namespaces: graph builds (sealing recent vectors into
   * HNSW, merging segments), then a snapshot when one is due, spending about `budget` work
   * units (default 2,000,000: 0.2–0.3 s of graph building in wasm; `Infinity`: until nothing
   * is due). Call it when idle (a timer, a Durable Object alarm) until the report says `done`:
   * a build continues where the last call stopped.
   */
  maintain({ force = false, budget } = {}) {
    return this.#run(null, (e) => parse(e.maintain(force, budget ?? -1)));
  }

  /** Deletes every record of namespace `ns` (one batch, then the storage compacts). */
  forgetNamespace(ns) {
    return this.#run(ns, (e) => e.forgetNamespace(ns));
  }

  /**
   * Erases from `ns`: `{scope: "namespace"}` (the default), `{scope: "subject", subject}` (every
   * record naming a person, contact or identifier) or `{scope: "episode", id}` — every layer in
   * one batch, then the storage compacts (log adapters) and a scan verifies. Resolves to the
   * receipt: `{format, namespace, scope, subjectSha256, erasedAt, layers, episodeIds, vacuumed,
   * storage, verification: {recordsScanned, bytesScanned, needles, occurrences, leftoverKeys}}`;
   * `vacuumed` is true when the storage rewrote its bytes (log adapters, memory), false when it
   * only deleted keys and the platform reclaims the space (IndexedDB, Durable Objects, KV);
   * `storage` says which.
   */
  async erase(ns, what = { scope: "namespace" }, { now } = {}) {
    const at = now ?? this.#clock();
    const receipt = await this.#run(ns, (e) => parse(e.erase(ns, JSON.stringify(what), at)));
    return this.#withStorage(receipt);
  }

  /**
   * Corrects episode `id` of `ns`: its text (and verdict) replaced under the same id, embedded
   * again, and what derived from the wrong version erased as by `erase({scope: "episode"})`;
   * the storage compacts and a scan verifies the old text is gone. Resolves to the receipt
   * (scope "correction").
   */
  async correct(ns, id, { text, verdict, vector } = {}, { now } = {}) {
    const at = now ?? this.#clock();
    const v = vector ?? (await this.#hostVector(text, "passage"));
    const fix = JSON.stringify({ text, verdict, vector: v ? Array.from(v) : undefined });
    const receipt = await this.#run(ns, (e) => parse(e.correct(ns, id, fix, at)));
    return this.#withStorage(receipt);
  }

  // The engine vacuumed its mirror; what happened to the bytes is the storage's to say.
  #withStorage(receipt) {
    const how = this.#storage.erasure;
    receipt.vacuumed = Boolean(how?.rewrites && typeof this.#storage.compact === "function");
    receipt.storage = how?.note ?? "unknown: this storage does not say how it erases (no `erasure`)";
    return receipt;
  }

  /** Queues an erasure (same `what`) for the nightly job; resolves to `{id}`. */
  requestErasure(ns, what, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.requestErasure(ns, JSON.stringify(what), at)));
  }

  /** Everything held about `ns`, decoded: the right of access (format "mnemo-access/1"). */
  exportReadable(ns, { now } = {}) {
    const at = now ?? this.#clock();
    return this.#run(ns, (e) => parse(e.exportReadable(ns, at)));
  }

  /**
   * `ns` as an encrypted file (a Uint8Array): AES-256-GCM with a key from scrypt of
   * `passphrase` (cost 2^logN, default 15). Salt and nonce come from `crypto.getRandomValues`.
   */
  exportEncrypted(ns, passphrase, { now, logN } = {}) {
    const at = now ?? this.#clock();
    const random = globalThis.crypto.getRandomValues(new Uint8Array(23));
    return this.#run(ns, (e) => e.exportEncrypted(ns, passphrase, random, at, logN));
  }

  /**
   * Imports an encrypted export into `ns`, which must be empty. Nothing is imported unless the
   * passphrase is right and every byte authenticates (errors: DECRYPT, CORRUPT, FORMAT).
   * Resolves to `{records, bytes}`.
   */
  importEncrypted(ns, passphrase, bytes) {
    const file = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    return this.#run(ns, (e) => parse(e.importEncrypted(ns, passphrase, file)));
  }

  /** Re-embeds every episode of `ns` with the attached embedder (after a model change). */
  reembed(ns) {
    return this.#run(ns, (e) => parse(e.reembed(ns)));
  }

  /** Records of `ns` that could not be read when it was opened: `[{key, episode, reason}]`. */
  quarantined(ns) {
    return this.#run(ns, (e) => parse(e.quarantined(ns)));
  }
}
