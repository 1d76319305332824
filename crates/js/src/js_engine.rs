//! The engine for JS hosts: `WasmEngine`, over a [`Journaled`] in-memory store.
//!
//! The JS layer (`pkg/src/index.js`) loads a namespace's records from the host's storage with
//! `preload`, calls a method, then takes the journal (`takeWrites`) and awaits the host's
//! storage before it resolves: an acknowledged write is stored. Objects cross as JSON text
//! (camelCase fields); errors are JS `Error`s with a stable `code`.

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

use super::js::js_error;
#[cfg(feature = "model")]
use super::js_embedder::JsEmbedder;
use mnemo::record::RuleStatus;
use mnemo::store::journal::Journaled;
use mnemo::store::{Batch, MemoryStore, Op};
use mnemo::{Config, Engine, Error};
use mnemo_json as json;
use mnemo_json::Json;

type Inner = Engine<Journaled<MemoryStore>>;

/// A JS function lent to the engine as its language model.
struct JsPhraser(js_sys::Function);

impl mnemo::learn::phrasing::Llm for JsPhraser {
    fn complete(&mut self, prompt: &str, max_tokens: u32) -> std::result::Result<String, String> {
        self.0
            .call2(&JsValue::NULL, &prompt.into(), &max_tokens.into())
            .map_err(|e| format!("the phraser threw: {e:?}"))?
            .as_string()
            .ok_or_else(|| "the phraser returned no string".to_string())
    }
}

/// A JS function lent to the engine as its model's tokenizer: `(text) => number`.
struct JsTokens(js_sys::Function);

impl mnemo::context::TokenCounter for JsTokens {
    fn count(&self, text: &str) -> usize {
        // A throwing or non-numeric counter falls back to the estimate for that text.
        match self.0.call1(&JsValue::NULL, &text.into()).ok().and_then(|v| v.as_f64()) {
            Some(n) if n.is_finite() && n >= 0.0 => n as usize,
            _ => mnemo::context::TokenCounter::count(&mnemo::context::Estimate, text),
        }
    }
}

/// The engine over an in-memory mirror of the host's storage.
#[wasm_bindgen]
pub struct WasmEngine {
    pub(super) inner: Inner,
}

#[wasm_bindgen]
impl WasmEngine {
    /// `options` (JSON): `vectorModel` and `dim` of host-supplied vectors (ignored once an
    /// embedder is attached), `snapshotAfter`, `snapshotChunk`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &str) -> Result<WasmEngine, JsValue> {
        let config = json::config(options).map_err(js_error)?;
        Ok(WasmEngine { inner: Engine::new(Journaled::new(MemoryStore::new()), config) })
    }

    /// Attaches an embedder (the `Embedder` object is moved into the engine).
    #[cfg(feature = "model")]
    #[wasm_bindgen(js_name = attachEmbedder)]
    pub fn attach_embedder(&mut self, embedder: JsEmbedder) {
        let engine = std::mem::replace(
            &mut self.inner,
            Engine::new(Journaled::new(MemoryStore::new()), Config::default()),
        );
        self.inner = engine.with_embedder(Box::new(embedder.into_inner()));
    }

    /// Lets a synchronous JS function `(prompt, maxTokens) => string` phrase observations
    /// (a host's language model). Its answers are checked (`learn::phrasing`); one that fails
    /// the checks, or throws, leaves the engine's own words.
    #[wasm_bindgen(js_name = attachPhraser)]
    pub fn attach_phraser(&mut self, phrase: js_sys::Function) {
        let engine = std::mem::replace(
            &mut self.inner,
            Engine::new(Journaled::new(MemoryStore::new()), Config::default()),
        );
        self.inner = engine.with_llm(Box::new(JsPhraser(phrase)));
    }

    /// Counts context tokens with a synchronous JS function `(text) => number` (the host
    /// model's tokenizer) instead of the estimate.
    #[wasm_bindgen(js_name = attachTokenCounter)]
    pub fn attach_token_counter(&mut self, count: js_sys::Function) {
        let engine = std::mem::replace(
            &mut self.inner,
            Engine::new(Journaled::new(MemoryStore::new()), Config::default()),
        );
        self.inner = engine.with_token_counter(Box::new(JsTokens(count)));
    }

    /// The context for a task (`request` JSON: `mnemo_json`'s context module), as JSON.
    pub fn context(&mut self, ns: &str, request: &str, now: f64) -> Result<String, JsValue> {
        Json(&mut self.inner).context(ns, request, now as i64).map_err(js_error)
    }

    /// Starts a task's working memory (`cap` tokens; 0 for the default 4,000).
    #[wasm_bindgen(js_name = taskStart)]
    pub fn task_start(
        &mut self,
        ns: &str,
        id: &str,
        content: &str,
        cap: f64,
    ) -> Result<String, JsValue> {
        let cap = (cap > 0.0).then_some(cap as usize);
        Json(&mut self.inner).task_start(ns, id, content, cap).map_err(js_error)
    }

    /// Adds a step (reasoning, tool-result, approval, note) to a task's working memory.
    #[wasm_bindgen(js_name = taskStep)]
    pub fn task_step(
        &mut self,
        ns: &str,
        id: &str,
        kind: &str,
        text: &str,
    ) -> Result<String, JsValue> {
        Json(&mut self.inner).task_step(ns, id, kind, text).map_err(js_error)
    }

    /// A task's working memory as it is now (JSON).
    #[wasm_bindgen(js_name = workingMemory)]
    pub fn working_memory(&self, ns: &str, id: &str) -> Result<String, JsValue> {
        Json(&self.inner).working_memory(ns, id).map_err(js_error)
    }

    /// Ends a task: its working memory is discarded and returned one last time (JSON).
    #[wasm_bindgen(js_name = taskEnd)]
    pub fn task_end(&mut self, ns: &str, id: &str) -> Result<String, JsValue> {
        Json(&mut self.inner).task_end(ns, id).map_err(js_error)
    }

    /// The full text behind an id a context gave (episode:42, rule:3, fact:KEY, …).
    pub fn expand(&mut self, ns: &str, id: &str) -> Result<String, JsValue> {
        self.inner.expand(ns, id).map_err(js_error)
    }

    /// Puts records the host read from its storage into the mirror (not journaled). `keys`
    /// and `values` are parallel arrays of `Uint8Array`.
    pub fn preload(&mut self, keys: Array, values: Array) -> Result<(), JsValue> {
        if keys.length() != values.length() {
            return Err(js_error(Error::InvalidInput(
                "preload needs as many values as keys".into(),
            )));
        }
        let mut batch = Batch::new();
        for (k, v) in keys.iter().zip(values.iter()) {
            let (k, v) = (k.dyn_into::<Uint8Array>()?, v.dyn_into::<Uint8Array>()?);
            batch.put(k.to_vec(), v.to_vec());
        }
        self.inner.store_mut().preload(&batch).map_err(js_error)
    }

    /// Drops namespace `ns` from the mirror and the engine (after a failed host write, so the
    /// host can preload it again from what its storage really holds).
    pub fn reset(&mut self, ns: &str) -> Result<(), JsValue> {
        let prefix = mnemo::store::Namespace::new(ns).map_err(js_error)?.prefix();
        self.inner.store_mut().drop_prefix(&prefix).map_err(js_error)?;
        self.inner.store_mut().take();
        self.inner.unload(ns);
        Ok(())
    }

    /// The writes since the last call, as an array of batches, each an array of
    /// `[key: Uint8Array, value: Uint8Array | null]` (null deletes).
    #[wasm_bindgen(js_name = takeWrites)]
    pub fn take_writes(&mut self) -> Array {
        let batches = Array::new();
        for batch in self.inner.store_mut().take() {
            let ops = Array::new();
            for op in batch.ops() {
                let (k, v) = match op {
                    Op::Put(k, v) => (k, Uint8Array::from(v.as_slice()).into()),
                    Op::Delete(k) => (k, JsValue::NULL),
                };
                ops.push(&Array::of2(&Uint8Array::from(k.as_slice()).into(), &v));
            }
            batches.push(&ops);
        }
        batches
    }

    /// Remembers an episode (JSON, see `record::json`); `vector` when the host embeds.
    /// Returns `{stored: true, id, importance, reason}` or `{stored: false, reason}`.
    pub fn remember(
        &mut self,
        ns: &str,
        episode: &str,
        vector: Option<Vec<f32>>,
    ) -> Result<String, JsValue> {
        Json(&mut self.inner).remember(ns, episode, vector.as_deref()).map_err(js_error)
    }

    /// Recalls: `query` (JSON) has `text`, `k`, `filter`, `touch`, `timeExpressions`; `vector`
    /// when the host embeds. Returns `{hits: [{episode, explanation}], window, windowDropped}`.
    pub fn recall(
        &mut self,
        ns: &str,
        query: &str,
        now: f64,
        vector: Option<Vec<f32>>,
    ) -> Result<String, JsValue> {
        Json(&mut self.inner).recall(ns, query, now as i64, vector).map_err(js_error)
    }

    /// Changes an episode's status (`raw`, `active`, `superseded`, `rejected`).
    #[wasm_bindgen(js_name = setStatus)]
    pub fn set_status(&mut self, ns: &str, id: f64, to: &str) -> Result<(), JsValue> {
        self.inner.set_status(ns, id as u64, json::status(to).map_err(js_error)?).map_err(js_error)
    }

    /// Episodes created before `before` (ms), oldest first, `limit` at most.
    pub fn timeline(&mut self, ns: &str, before: f64, limit: usize) -> Result<String, JsValue> {
        Json(&mut self.inner).timeline(ns, before as i64, limit).map_err(js_error)
    }

    /// Sets a fact: `fact` (JSON) has `key`, `value`, `source` (explicit, admin, implicit),
    /// `confidence`, `policy` (auto-inject, sensitive, never-inject), `ttlMs`. Returns
    /// `{written|confirmed|refused…}`.
    #[wasm_bindgen(js_name = setFact)]
    pub fn set_fact(&mut self, ns: &str, fact: &str, now: f64) -> Result<String, JsValue> {
        Json(&mut self.inner).set_fact(ns, fact, now as i64).map_err(js_error)
    }

    /// The current fact under `key` (null when none holds at `now`; low-confidence ones only
    /// with `all`).
    pub fn fact(&mut self, ns: &str, key: &str, now: f64, all: bool) -> Result<String, JsValue> {
        Json(&self.inner).fact(ns, key, now as i64, all).map_err(js_error)
    }

    /// Every fact holding at `now`.
    pub fn facts(&mut self, ns: &str, now: f64, all: bool) -> Result<String, JsValue> {
        Json(&self.inner).facts(ns, now as i64, all).map_err(js_error)
    }

    /// Every version of a fact, oldest first.
    #[wasm_bindgen(js_name = factHistory)]
    pub fn fact_history(&self, ns: &str, key: &str) -> Result<String, JsValue> {
        Json(&self.inner).fact_history(ns, key).map_err(js_error)
    }

    /// Makes version `version` of a fact current again; returns the new version number.
    #[wasm_bindgen(js_name = rollbackFact)]
    pub fn rollback_fact(
        &mut self,
        ns: &str,
        key: &str,
        version: u32,
        now: f64,
    ) -> Result<u32, JsValue> {
        self.inner.rollback_fact(ns, key, version, now as i64).map_err(js_error)
    }

    /// Adds a rule written by `origin` (user or admin); returns its id.
    #[wasm_bindgen(js_name = addRule)]
    pub fn add_rule(
        &mut self,
        ns: &str,
        text: &str,
        observation: &str,
        to: &str,
        origin: &str,
        now: f64,
    ) -> Result<f64, JsValue> {
        let s: RuleStatus = to.parse().map_err(js_error)?;
        let o = origin.parse().map_err(js_error)?;
        Ok(self.inner.add_rule(ns, text, observation, s, o, now as i64).map_err(js_error)? as f64)
    }

    /// Rules with one of `statuses` (all when empty).
    pub fn rules(&self, ns: &str, statuses: Vec<String>) -> Result<String, JsValue> {
        Json(&self.inner).rules(ns, &statuses).map_err(js_error)
    }

    /// Changes a rule's status (candidate, active, demoted; superseded is set only by merging).
    #[wasm_bindgen(js_name = setRuleStatus)]
    pub fn set_rule_status(
        &mut self,
        ns: &str,
        id: f64,
        to: &str,
        now: f64,
    ) -> Result<(), JsValue> {
        let status = to.parse().map_err(js_error)?;
        self.inner.set_rule_status(ns, id as u64, status, now as i64).map_err(js_error)
    }

    /// Asserts a triple (`{subject, predicate, object, confidence?, source?}`); returns it as
    /// it holds now.
    #[wasm_bindgen(js_name = assertTriple)]
    pub fn assert_triple(&mut self, ns: &str, triple: &str, now: f64) -> Result<String, JsValue> {
        Json(&mut self.inner).assert_triple(ns, triple, now as i64).map_err(js_error)
    }

    /// The triples about `subject` that hold now (with `history`, the ended ones too).
    pub fn triples(&self, ns: &str, subject: &str, history: bool) -> Result<String, JsValue> {
        Json(&self.inner).triples(ns, subject, history).map_err(js_error)
    }

    /// Open observations ranked by cosine × exp(−λ·days) against `text` (its vector from the
    /// embedder, or `vector`).
    #[wasm_bindgen(js_name = recallObservations)]
    pub fn recall_observations(
        &mut self,
        ns: &str,
        text: &str,
        vector: Option<Vec<f32>>,
        k: usize,
        now: f64,
    ) -> Result<String, JsValue> {
        Json(&mut self.inner)
            .recall_observations(ns, text, vector.as_deref(), k, now as i64)
            .map_err(js_error)
    }

    /// Stores one behaviour signal (JSON); returns `{id}`.
    pub fn signal(&mut self, ns: &str, signal: &str) -> Result<String, JsValue> {
        self.inner.signal_json(ns, signal).map_err(js_error)
    }

    /// Stores JSON Lines of episodes all or nothing (one atomic batch; lines imported before
    /// are skipped), trusted up to `origin`; returns `{stored, discarded, duplicates}`.
    /// `vectors`: the host's, one per non-blank line, laid end to end (the engine's dimension
    /// each), when the engine has no embedder.
    pub fn ingest(
        &mut self,
        ns: &str,
        jsonl: &str,
        origin: &str,
        now: f64,
        vectors: Option<Vec<f32>>,
    ) -> Result<String, JsValue> {
        let dim = self.inner.config().dim.max(1);
        let split = vectors.map(|v| v.chunks(dim).map(<[f32]>::to_vec).collect::<Vec<_>>());
        Json(&mut self.inner)
            .ingest(ns, jsonl, origin, now as i64, split.as_deref())
            .map_err(js_error)
    }

    /// Stores JSON Lines of signals all or nothing (one atomic batch; lines imported before
    /// are skipped); returns `{ids, duplicates}`.
    pub fn signals(&mut self, ns: &str, jsonl: &str) -> Result<String, JsValue> {
        Json(&mut self.inner).signals(ns, jsonl).map_err(js_error)
    }

    /// Runs the pattern detector at `now`; returns what it wrote.
    pub fn observe(&mut self, ns: &str, now: f64) -> Result<String, JsValue> {
        Json(&mut self.inner).observe(ns, now as i64).map_err(js_error)
    }

    /// Observations with one of `statuses` (open, rejected, merged; all when empty).
    pub fn observations(&self, ns: &str, statuses: Vec<String>) -> Result<String, JsValue> {
        Json(&self.inner).observations(ns, &statuses).map_err(js_error)
    }

    /// The user's verdict on observation `id`: "right" or "wrong".
    pub fn feedback(
        &mut self,
        ns: &str,
        id: f64,
        verdict: &str,
        now: f64,
    ) -> Result<String, JsValue> {
        Json(&mut self.inner).feedback(ns, id as u64, verdict, now as i64).map_err(js_error)
    }

    /// Promotes the observations that qualify; returns the new rules.
    pub fn promote(&mut self, ns: &str, now: f64) -> Result<String, JsValue> {
        Json(&mut self.inner).promote(ns, now as i64).map_err(js_error)
    }

    /// How the task served by recall `retrieval_id` ended: success, failure or partial.
    pub fn outcome(
        &mut self,
        ns: &str,
        retrieval_id: f64,
        outcome: &str,
        now: f64,
    ) -> Result<String, JsValue> {
        Json(&mut self.inner)
            .outcome(ns, retrieval_id as u64, outcome, now as i64)
            .map_err(js_error)
    }

    /// Entries that precede failures, successes or nothing.
    #[wasm_bindgen(js_name = outcomeReport)]
    pub fn outcome_report(&self, ns: &str) -> Result<String, JsValue> {
        Json(&self.inner).outcome_report(ns).map_err(js_error)
    }

    /// The nightly job at `now`, spending about `budget` work units (negative: no limit).
    pub fn nightly(&mut self, ns: &str, now: f64, budget: f64) -> Result<String, JsValue> {
        let budget = (budget >= 0.0).then_some(budget as u64);
        Json(&mut self.inner).nightly(ns, now as i64, budget).map_err(js_error)
    }

    /// The reports of the last finished nightly runs, oldest first (JSON).
    #[wasm_bindgen(js_name = nightlyLog)]
    pub fn nightly_log(&self, ns: &str) -> Result<String, JsValue> {
        Json(&self.inner).nightly_log(ns).map_err(js_error)
    }

    /// Counts per tier and status, retrievable vs cold, and bytes (JSON).
    pub fn stats(&mut self, ns: &str, now: f64) -> Result<String, JsValue> {
        Json(&mut self.inner).stats(ns, now as i64).map_err(js_error)
    }

    /// The recency factor the default scoring gives an episode of `tier` last accessed
    /// `age_days` ago: `floor + (1 − floor) · decay`.
    pub fn recency(&self, age_days: f32, tier: u8) -> f32 {
        self.inner.config().scoring.floored_recency(age_days, tier)
    }

    /// The background step (graph builds, snapshot), spending about `budget` work units
    /// (negative: the default budget; `Infinity`: until nothing is due); returns what it did.
    pub fn maintain(&mut self, force: bool, budget: f64) -> Result<String, JsValue> {
        let budget = if budget == f64::INFINITY {
            None
        } else if budget >= 0.0 {
            Some(budget as u64)
        } else {
            Some(mnemo::engine::MAINTAIN_BUDGET)
        };
        Json(&mut self.inner).maintain(force, budget).map_err(js_error)
    }

    /// Deletes every record of namespace `ns`; returns how many.
    #[wasm_bindgen(js_name = forgetNamespace)]
    pub fn forget_namespace(&mut self, ns: &str) -> Result<usize, JsValue> {
        self.inner.forget_namespace(ns).map_err(js_error)
    }

    /// Loads namespace `ns` from the preloaded records; returns its episode count.
    pub fn load(&mut self, ns: &str) -> Result<usize, JsValue> {
        self.inner.load(ns).map_err(js_error)
    }

    /// How `ns` was opened: `{from: "snapshot" | "records", …}` (null when not loaded).
    pub fn opened(&self, ns: &str) -> Result<String, JsValue> {
        Json(&self.inner).opened(ns).map_err(js_error)
    }
}
