//! The engine for JS hosts: `WasmEngine`, over a [`Journaled`] in-memory store.
//!
//! The JS layer (`pkg/src/index.js`) loads a namespace's records from the host's storage with
//! `preload`, calls a method, then takes the journal (`takeWrites`) and awaits the host's
//! storage before it resolves: an acknowledged write is stored. Objects cross as JSON text
//! (camelCase fields); errors are JS `Error`s with a stable `code`.

use js_sys::{Array, Uint8Array};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::js::js_error;
#[cfg(feature = "model")]
use super::js_embedder::JsEmbedder;
use crate::engine::{FactWrite, Filter, Query};
use crate::record::json::{episode_from_json, time_from_json};
use crate::record::{Policy, RuleStatus, Source, Status};
use crate::store::journal::Journaled;
use crate::store::{Batch, KvStore, MemoryStore, Op};
use crate::{Config, Engine, Error, Remembered};

type Inner = Engine<Journaled<MemoryStore>>;

fn invalid(msg: impl Into<String>) -> JsValue {
    js_error(Error::InvalidInput(msg.into()))
}

fn parse(json: &str, what: &str) -> Result<Value, JsValue> {
    serde_json::from_str(json).map_err(|e| invalid(format!("{what} is not JSON: {e}")))
}

fn out(v: impl serde::Serialize) -> Result<String, JsValue> {
    serde_json::to_string(&v).map_err(|e| invalid(e.to_string()))
}

fn str_of<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name).and_then(Value::as_str)
}

fn strings(v: &Value, name: &str) -> Vec<String> {
    v.get(name)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn status(s: &str) -> Result<Status, JsValue> {
    match s {
        "raw" => Ok(Status::Raw),
        "active" => Ok(Status::Active),
        "superseded" => Ok(Status::Superseded),
        "rejected" => Ok(Status::Rejected),
        other => Err(invalid(format!(
            "status {other:?} is not one of raw, active, superseded, rejected"
        ))),
    }
}

fn filter(v: &Value) -> Result<Filter, JsValue> {
    let mut f = Filter {
        agent: str_of(v, "agent").map(str::to_string),
        entity: str_of(v, "entity").map(str::to_string),
        tags: strings(v, "tags"),
        kinds: strings(v, "kinds"),
        tool: str_of(v, "tool").map(str::to_string),
        entity_type: str_of(v, "entityType").map(str::to_string),
        error_class: str_of(v, "errorClass").map(str::to_string),
        stage: str_of(v, "stage").map(str::to_string),
        ..Filter::default()
    };
    for s in strings(v, "statuses") {
        f.statuses.push(status(&s)?);
    }
    if let Some(t) = v.get("tiers").and_then(Value::as_array) {
        f.tiers = t.iter().filter_map(Value::as_u64).map(|t| t.min(2) as u8).collect();
    }
    if let (Some(from), Some(to)) = (v.get("from"), v.get("to")) {
        let from = time_from_json(from, "from").map_err(js_error)?;
        let to = time_from_json(to, "to").map_err(js_error)?;
        f.window = Some(crate::time::Window { from, to });
    }
    Ok(f)
}

/// The engine over an in-memory mirror of the host's storage.
#[wasm_bindgen]
pub struct WasmEngine {
    inner: Inner,
}

#[wasm_bindgen]
impl WasmEngine {
    /// `options` (JSON): `vectorModel` and `dim` of host-supplied vectors (ignored once an
    /// embedder is attached), `snapshotAfter`, `snapshotChunk`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &str) -> Result<WasmEngine, JsValue> {
        let o = parse(options, "options")?;
        let mut config = Config::default();
        if let Some(m) = str_of(&o, "vectorModel") {
            config.vector_model = m.to_string();
        }
        if let Some(d) = o.get("dim").and_then(Value::as_u64) {
            config.dim = d as usize;
        }
        if let Some(n) = o.get("snapshotAfter").and_then(Value::as_u64) {
            config.snapshot_after = n as usize;
        }
        if let Some(n) = o.get("snapshotChunk").and_then(Value::as_u64) {
            config.snapshot_chunk = n as usize;
        }
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

    /// Puts records the host read from its storage into the mirror (not journaled). `keys`
    /// and `values` are parallel arrays of `Uint8Array`.
    pub fn preload(&mut self, keys: Array, values: Array) -> Result<(), JsValue> {
        if keys.length() != values.length() {
            return Err(invalid("preload needs as many values as keys"));
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
        let prefix = crate::store::Namespace::new(ns).map_err(js_error)?.prefix();
        let mut batch = Batch::new();
        for (k, _) in self.inner.store().scan(&prefix, None, usize::MAX).map_err(js_error)? {
            batch.delete(k);
        }
        self.inner.store_mut().preload(&batch).map_err(js_error)?;
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
        let e = episode_from_json(&parse(episode, "episode")?).map_err(js_error)?;
        match self.inner.remember(ns, e, vector.as_deref()).map_err(js_error)? {
            Remembered::Stored { id, importance, reason } => {
                out(json!({"stored": true, "id": id, "importance": importance, "reason": reason}))
            }
            Remembered::Discarded { reason } => out(json!({"stored": false, "reason": reason})),
        }
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
        let q = parse(query, "query")?;
        let text = str_of(&q, "text").ok_or_else(|| invalid("a query needs a \"text\""))?;
        let mut query = Query::new(text, q.get("k").and_then(Value::as_u64).unwrap_or(5) as usize);
        if let Some(f) = q.get("filter") {
            query.filter = filter(f)?;
        }
        query.touch = q.get("touch").and_then(Value::as_bool).unwrap_or(true);
        query.time_expressions = q.get("timeExpressions").and_then(Value::as_bool).unwrap_or(true);
        query.vector = vector;
        let r = self.inner.recall(ns, &query, now as i64).map_err(js_error)?;
        let hits: Vec<Value> = r
            .hits
            .iter()
            .map(|h| json!({"episode": h.episode, "explanation": h.explanation}))
            .collect();
        let window = r.window.map(|w| json!({"from": w.from, "to": w.to}));
        out(json!({"hits": hits, "window": window, "windowDropped": r.window_dropped}))
    }

    /// Changes an episode's status (`raw`, `active`, `superseded`, `rejected`).
    #[wasm_bindgen(js_name = setStatus)]
    pub fn set_status(&mut self, ns: &str, id: f64, to: &str) -> Result<(), JsValue> {
        self.inner.set_status(ns, id as u64, status(to)?).map_err(js_error)
    }

    /// Episodes created before `before` (ms), oldest first, `limit` at most.
    pub fn timeline(&mut self, ns: &str, before: f64, limit: usize) -> Result<String, JsValue> {
        out(self.inner.timeline(ns, before as i64, limit).map_err(js_error)?)
    }

    /// Sets a fact: `fact` (JSON) has `key`, `value`, `source` (explicit, admin, implicit),
    /// `confidence`, `policy` (auto-inject, sensitive, never-inject), `ttlMs`. Returns
    /// `{written|confirmed|refused…}`.
    #[wasm_bindgen(js_name = setFact)]
    pub fn set_fact(&mut self, ns: &str, fact: &str, now: f64) -> Result<String, JsValue> {
        let f = parse(fact, "fact")?;
        let key = str_of(&f, "key").ok_or_else(|| invalid("a fact needs a \"key\""))?;
        let value = str_of(&f, "value").ok_or_else(|| invalid("a fact needs a \"value\""))?;
        let source: Source =
            str_of(&f, "source").unwrap_or("explicit").parse().map_err(js_error)?;
        let policy: Policy =
            str_of(&f, "policy").unwrap_or("auto-inject").parse().map_err(js_error)?;
        let confidence = f.get("confidence").and_then(Value::as_f64).unwrap_or(1.0) as f32;
        let ttl = f.get("ttlMs").and_then(Value::as_i64);
        let w = self
            .inner
            .set_fact(ns, key, value, source, confidence, policy, ttl, now as i64)
            .map_err(js_error)?;
        out(match w {
            FactWrite::Written { version } => json!({"result": "written", "version": version}),
            FactWrite::Confirmed { version } => json!({"result": "confirmed", "version": version}),
            FactWrite::Refused { held_by } => json!({"result": "refused", "heldBy": held_by}),
        })
    }

    /// The current fact under `key` (null when none holds at `now`; low-confidence ones only
    /// with `all`).
    pub fn fact(&mut self, ns: &str, key: &str, now: f64, all: bool) -> Result<String, JsValue> {
        out(self.inner.fact(ns, key, now as i64, all).map_err(js_error)?)
    }

    /// Every fact holding at `now`.
    pub fn facts(&mut self, ns: &str, now: f64, all: bool) -> Result<String, JsValue> {
        out(self.inner.facts(ns, now as i64, &[], all).map_err(js_error)?)
    }

    /// Every version of a fact, oldest first.
    #[wasm_bindgen(js_name = factHistory)]
    pub fn fact_history(&self, ns: &str, key: &str) -> Result<String, JsValue> {
        out(self.inner.fact_history(ns, key).map_err(js_error)?)
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

    /// Adds a rule; returns its id.
    #[wasm_bindgen(js_name = addRule)]
    pub fn add_rule(
        &mut self,
        ns: &str,
        text: &str,
        observation: &str,
        to: &str,
        now: f64,
    ) -> Result<f64, JsValue> {
        let s: RuleStatus = to.parse().map_err(js_error)?;
        Ok(self.inner.add_rule(ns, text, observation, s, now as i64).map_err(js_error)? as f64)
    }

    /// Rules with one of `statuses` (all when empty).
    pub fn rules(&self, ns: &str, statuses: Vec<String>) -> Result<String, JsValue> {
        let mut want = Vec::new();
        for s in &statuses {
            want.push(s.parse::<RuleStatus>().map_err(js_error)?);
        }
        if want.is_empty() {
            want = vec![RuleStatus::Candidate, RuleStatus::Active, RuleStatus::Demoted];
        }
        out(self.inner.rules(ns, &want).map_err(js_error)?)
    }

    /// The recency factor the default scoring gives an episode of `tier` last accessed
    /// `age_days` ago: `floor + (1 − floor) · decay`.
    pub fn recency(&self, age_days: f32, tier: u8) -> f32 {
        self.inner.config().scoring.floored_recency(age_days, tier)
    }

    /// The background step (seal vectors, snapshot); returns what it did.
    pub fn maintain(&mut self, force: bool) -> Result<String, JsValue> {
        let m = self.inner.maintain(force).map_err(js_error)?;
        out(json!({"sealed": m.sealed, "merges": m.merges, "segments": m.segments,
            "snapshots": m.snapshots, "snapshotBytes": m.snapshot_bytes}))
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
        out(self.inner.opened(ns).map(|o| match o {
            crate::engine::Opened::Rebuilt { reason } => {
                json!({"from": "records", "reason": reason})
            }
            crate::engine::Opened::Snapshot { watermark, replayed, refreshed } => json!({
                "from": "snapshot", "watermark": watermark, "replayed": replayed,
                "refreshed": refreshed
            }),
        }))
    }
}
