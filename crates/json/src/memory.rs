//! Episodes, recall, facts, rules, statistics and maintenance through JSON text.

use std::ops::{Deref, DerefMut};

use mnemo::Engine;
use serde_json::{json, Value};

use mnemo::engine::{
    Config, FactInput, FactWrite, Filter, IngestOptions, Opened, Query, Recall, Remembered,
};

use crate::{out, out_tree, parse, str_of, strings, value, Json};
use mnemo::embed::passages::{Passage, TextVectors};
use mnemo::error::{Error, Result};
use mnemo::record::json::{episode_from_json, time_from_json};
use mnemo::record::{RuleStatus, Source, Status};
use mnemo::store::KvStore;
use mnemo::time::Window;

/// A recall's answer: `{hits: [{episode, explanation}], window, windowDropped, retrievalId}`
/// (what [`Json::recall`] returns, for a caller that ran the typed recall itself).
pub fn recall_answer(r: &Recall) -> Result<String> {
    out(RecallAnswer::of(r))
}

/// The shape of a recall's answer ([`recall_answer`]), serialized straight from the typed
/// recall (so its `f32` values are written as such, and no JSON tree is built on the way).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallAnswer<'a> {
    hits: Vec<HitAnswer<'a>>,
    window: Option<WindowAnswer>,
    window_dropped: bool,
    retrieval_id: Option<u64>,
}

#[derive(serde::Serialize)]
struct HitAnswer<'a> {
    episode: &'a mnemo::record::Episode,
    explanation: &'a mnemo::engine::Explanation,
}

#[derive(serde::Serialize)]
struct WindowAnswer {
    from: i64,
    to: i64,
}

impl<'a> RecallAnswer<'a> {
    /// The answer to recall `r`.
    pub fn of(r: &'a Recall) -> Self {
        RecallAnswer {
            hits: r
                .hits
                .iter()
                .map(|h| HitAnswer { episode: &h.episode, explanation: &h.explanation })
                .collect(),
            window: r.window.map(|w| WindowAnswer { from: w.from, to: w.to }),
            window_dropped: r.window_dropped,
            retrieval_id: r.retrieval_id,
        }
    }
}

/// A status from its name.
pub fn status(s: &str) -> Result<Status> {
    match s {
        "raw" => Ok(Status::Raw),
        "active" => Ok(Status::Active),
        "superseded" => Ok(Status::Superseded),
        "rejected" => Ok(Status::Rejected),
        other => Err(Error::InvalidInput(format!(
            "status {other:?} is not one of raw, active, superseded, rejected"
        ))),
    }
}

fn filter(v: &Value) -> Result<Filter> {
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
        f.window =
            Some(Window { from: time_from_json(from, "from")?, to: time_from_json(to, "to")? });
    }
    Ok(f)
}

/// Settings from JSON: `vectorModel`, `dim`, `snapshotAfter`, `snapshotChunk`, and `keepAll`
/// (the write policy discards nothing and masks no secret: benchmarks score retrieval, not the
/// policy; `mnemo bench` stores items the same way).
pub fn config(options: &str) -> Result<Config> {
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
    if o.get("keepAll").and_then(Value::as_bool) == Some(true) {
        config.policy.min_chars = 1;
        config.policy.discard_kinds.clear();
        config.policy.discard_containing.clear();
        config.policy.secrets = mnemo::engine::SecretAction::Keep;
    }
    Ok(config)
}

impl<S: KvStore, R: Deref<Target = Engine<S>>> Json<R> {
    /// [`Engine::nightly_log`] as a JSON list of nightly reports, oldest first.
    pub fn nightly_log(&self, ns: &str) -> Result<String> {
        out(self.0.nightly_log(ns)?)
    }

    /// [`Engine::fact`] as JSON (null when none holds).
    pub fn fact(&self, ns: &str, key: &str, now: i64, all: bool) -> Result<String> {
        out(self.0.fact(ns, key, now, all)?)
    }

    /// [`Engine::facts`] (every policy) as JSON.
    pub fn facts(&self, ns: &str, now: i64, all: bool) -> Result<String> {
        out(self.0.facts(ns, now, &[], all)?)
    }

    /// [`Engine::fact_history`] as JSON.
    pub fn fact_history(&self, ns: &str, key: &str) -> Result<String> {
        out(self.0.fact_history(ns, key)?)
    }

    /// [`Engine::rules`] with statuses by name (all when empty), as a JSON list of
    /// `mnemo_json::rule_json` objects.
    pub fn rules(&self, ns: &str, statuses: &[String]) -> Result<String> {
        let want = statuses.iter().map(|s| s.parse::<RuleStatus>()).collect::<Result<Vec<_>>>()?;
        out(self.0.rules(ns, &want)?.iter().map(crate::learning::rule_json).collect::<Vec<_>>())
    }

    /// [`Engine::opened`] as JSON: `{from: "snapshot" | "records", …}` or null.
    pub fn opened(&self, ns: &str) -> Result<String> {
        out(self.0.opened(ns).map(|o| match o {
            Opened::Rebuilt { reason } => json!({"from": "records", "reason": reason}),
            Opened::Snapshot { watermark, replayed, refreshed } => json!({
                "from": "snapshot", "watermark": watermark, "replayed": replayed,
                "refreshed": refreshed
            }),
        }))
    }

    /// [`Engine::triples`]: the triples about `subject` that hold now, and with `history`
    /// the ended ones too, as a JSON list.
    pub fn triples(&self, ns: &str, subject: &str, history: bool) -> Result<String> {
        out(value(self.0.triples(ns, subject, history)?))
    }
}

impl<S: KvStore, R: DerefMut<Target = Engine<S>>> Json<R> {
    /// [`Engine::remember`] from a JSON episode (`record::json`); returns
    /// `{stored: true, id, importance, reason}` or `{stored: false, reason}`. A host that
    /// embedded a long text as passages itself passes the whole text's vector as `vector` and
    /// the passages in the episode as `passages: [{start, end, vector}]`
    /// ([`Engine::remember_passages`]); otherwise the engine's embedder makes them.
    pub fn remember(&mut self, ns: &str, episode: &str, vector: Option<&[f32]>) -> Result<String> {
        let v = parse(episode, "episode")?;
        let e = episode_from_json(&v)?;
        let stored =
            match (v.get("passages"), vector) {
                (None | Some(Value::Null), _) => self.0.remember(ns, e, vector)?,
                (Some(p), Some(whole)) => {
                    let vectors =
                        TextVectors { whole: whole.to_vec(), passages: passages_from_json(p)? };
                    self.0.remember_passages(ns, e, vectors)?
                }
                (Some(_), None) => return Err(Error::InvalidInput(
                    "\"passages\" came without the text's vector: pass the whole text's vector \
                     too (the normalised mean of the passages' does), or neither"
                        .into(),
                )),
            };
        match stored {
            Remembered::Stored { id, importance, reason } => out(
                json!({"stored": true, "id": id, "importance": value(importance), "reason": reason}),
            ),
            Remembered::Discarded { reason } => {
                out_tree(json!({"stored": false, "reason": reason}))
            }
        }
    }

    /// [`Engine::ingest_jsonl`]: the lines of `jsonl` as episodes, all or nothing, trusted up
    /// to `origin` (`unknown` unless the caller vouches for the file). Returns `{stored: [id],
    /// discarded: [{line, reason}], duplicates: [{line, id}]}`.
    /// `vectors`: the host's, one per non-blank line, when the engine has no embedder.
    pub fn ingest(
        &mut self,
        ns: &str,
        jsonl: &str,
        origin: &str,
        now: i64,
        vectors: Option<&[Vec<f32>]>,
    ) -> Result<String> {
        let options = IngestOptions { origin: origin.parse()?, now };
        let r = self.0.ingest_jsonl_with(ns, jsonl, &options, vectors, &mut |_, _| {})?;
        out_tree(json!({
            "stored": r.stored,
            "discarded": r.discarded.iter().map(|(l, why)| json!({"line": l, "reason": why}))
                .collect::<Vec<_>>(),
            "duplicates": r.duplicates.iter().map(|(l, id)| json!({"line": l, "id": id}))
                .collect::<Vec<_>>(),
        }))
    }

    /// [`Engine::recall`] from a JSON query (`text`, `k`, `filter`, `touch`,
    /// `timeExpressions`, `includeCold`, `formula`, `scoring`: see [`scoring`]); returns `{hits: [{episode, explanation}], window, windowDropped}`.
    pub fn recall(
        &mut self,
        ns: &str,
        query: &str,
        now: i64,
        vector: Option<Vec<f32>>,
    ) -> Result<String> {
        let q = parse(query, "query")?;
        let text = str_of(&q, "text")
            .ok_or_else(|| Error::InvalidInput("a query needs a \"text\"".into()))?;
        let mut query = Query::new(text, q.get("k").and_then(Value::as_u64).unwrap_or(5) as usize);
        if let Some(f) = q.get("filter") {
            query.filter = filter(f)?;
        }
        query.touch = q.get("touch").and_then(Value::as_bool).unwrap_or(true);
        query.time_expressions = q.get("timeExpressions").and_then(Value::as_bool).unwrap_or(true);
        query.include_cold = q.get("includeCold").and_then(Value::as_bool).unwrap_or(false);
        query.vector = vector;
        query.scoring = scoring(&q, &self.0.config().scoring)?;
        recall_answer(&self.0.recall(ns, &query, now)?)
    }

    /// [`Engine::stats`] as `{episodes, retrievable, cold, tiers: {raw, weekly, monthly},
    /// statuses: {raw, active, superseded, rejected}, bytes}` (integers).
    pub fn stats(&mut self, ns: &str, now: i64) -> Result<String> {
        out(self.0.stats(ns, now)?)
    }

    /// [`Engine::timeline`] as a JSON list.
    pub fn timeline(&mut self, ns: &str, before: i64, limit: usize) -> Result<String> {
        out(self.0.timeline(ns, before, limit)?)
    }

    /// [`Engine::write_fact`] from `{key, value, source?, origin?, confidence?, policy?,
    /// ttlMs?}` (unlabelled input is source `implicit`, origin `unknown`); returns
    /// `{result: "written" | "confirmed", version, source, origin}` or `{result: "refused",
    /// heldBy}`. `source` is the one written: an untrusted origin's is capped at implicit.
    pub fn set_fact(&mut self, ns: &str, fact: &str, now: i64) -> Result<String> {
        let input = FactInput::from_json(&parse(fact, "fact")?)?;
        let (source, origin) = (input.effective_source(), input.origin);
        out(match self.0.write_fact(ns, &input, now)? {
            FactWrite::Written { version } => json!({"result": "written", "version": version,
                "source": source, "origin": origin}),
            FactWrite::Confirmed { version } => json!({"result": "confirmed", "version": version,
                "source": source, "origin": origin}),
            FactWrite::Refused { held_by } => json!({"result": "refused", "heldBy": held_by}),
        })
    }

    /// [`Engine::maintain`] as JSON.
    pub fn maintain(&mut self, force: bool, budget: Option<u64>) -> Result<String> {
        let m = self.0.maintain(force, budget)?;
        out_tree(json!({"sealed": m.sealed, "merges": m.merges, "segments": m.segments,
            "snapshots": m.snapshots, "snapshotBytes": m.snapshot_bytes, "work": m.work,
            "done": m.done}))
    }

    /// [`Engine::set_status`] with the status by name (raw, active, superseded, rejected);
    /// returns `{ok: true}`.
    pub fn set_status(&mut self, ns: &str, id: u64, to: &str) -> Result<String> {
        self.0.set_status(ns, id, status(to)?)?;
        out_tree(json!({"ok": true}))
    }

    /// [`Engine::rollback_fact`]: the fact back at `version`, as a new version; returns
    /// `{version}`.
    pub fn rollback_fact(&mut self, ns: &str, key: &str, version: u32, now: i64) -> Result<String> {
        out_tree(json!({"version": self.0.rollback_fact(ns, key, version, now)?}))
    }

    /// [`Engine::assert_triple`] from `{subject, predicate, object, confidence?, source?}`
    /// (confidence 1 and source implicit when absent); returns the triple as it holds now.
    pub fn assert_triple(&mut self, ns: &str, triple: &str, now: i64) -> Result<String> {
        let t = parse(triple, "triple")?;
        let need = |name: &str| {
            str_of(&t, name)
                .ok_or_else(|| Error::InvalidInput(format!("a triple needs a \"{name}\"")))
        };
        let confidence = t.get("confidence").map_or(Some(1.0), Value::as_f64).ok_or_else(|| {
            Error::InvalidInput("a triple's \"confidence\" is a number from 0 to 1".into())
        })? as f32;
        let source: Source = str_of(&t, "source").unwrap_or("implicit").parse()?;
        let (s, p, o) = (need("subject")?, need("predicate")?, need("object")?);
        out(value(self.0.assert_triple(ns, s, p, o, confidence, source, now)?))
    }
}

/// A query's own scoring, when it names one: `formula` (`balanced`, `plain-decay`, `weighted`,
/// `lexical` for BM25 alone, `dense` for the cosine alone) and `scoring`, an object of
/// parameter overrides by [`Scoring::set`] name (`{"recency_floor": 1}`).
fn scoring(q: &Value, default: &mnemo::engine::Scoring) -> Result<Option<mnemo::engine::Scoring>> {
    if q.get("formula").is_none() && q.get("scoring").is_none() {
        return Ok(None);
    }
    let mut s = default.clone();
    if let Some(f) = q.get("formula") {
        let name = f.as_str().unwrap_or_default();
        s.formula = mnemo::engine::Formula::parse(name).ok_or_else(|| {
            Error::InvalidInput(format!(
                "unknown formula {f}: use balanced, plain-decay, weighted, lexical or dense"
            ))
        })?;
    }
    if let Some(o) = q.get("scoring") {
        let o = o.as_object().ok_or_else(|| {
            Error::InvalidInput("\"scoring\" is an object of parameter: number".into())
        })?;
        for (k, v) in o {
            let v = v.as_f64().or_else(|| v.as_bool().map(f64::from)).ok_or_else(|| {
                Error::InvalidInput(format!("scoring parameter {k} needs a number"))
            })?;
            s.set(k, v)?;
        }
    }
    Ok(Some(s))
}

/// `[{start, end, vector: [f32…]}]`: the passages a host embedded itself (byte offsets of each
/// window in the episode's text).
fn passages_from_json(v: &Value) -> Result<Vec<Passage>> {
    let bad = |why: String| Error::InvalidInput(format!("\"passages\": {why}"));
    let list = v.as_array().ok_or_else(|| bad("must be a list of {start, end, vector}".into()))?;
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            let offset = |name: &str| {
                p.get(name)
                    .and_then(Value::as_u64)
                    .and_then(|x| u32::try_from(x).ok())
                    .ok_or_else(|| bad(format!("passage {i} needs \"{name}\", a byte offset")))
            };
            let vector = p
                .get("vector")
                .and_then(Value::as_array)
                .and_then(|xs| xs.iter().map(|x| x.as_f64().map(|f| f as f32)).collect())
                .ok_or_else(|| bad(format!("passage {i} needs \"vector\", a list of numbers")))?;
            Ok(Passage { start: offset("start")?, end: offset("end")?, vector })
        })
        .collect()
}

/// Refuses an episode (JSON text) dated more than [`mnemo::engine::MAX_FUTURE_MS`] after
/// `now`.
pub(crate) fn check_not_future(episode: &str, now: i64) -> Result<()> {
    let e = episode_from_json(&parse(episode, "episode")?)?;
    if e.created_at > now.saturating_add(mnemo::engine::MAX_FUTURE_MS) {
        return Err(Error::InvalidInput(format!(
            "the episode is dated {} ms after now, more than a day ahead: check its time (and \
             its zone)",
            e.created_at - now
        )));
    }
    Ok(())
}
