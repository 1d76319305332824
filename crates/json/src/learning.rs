//! The learning loop through JSON text, for bindings (JS, the WIT component, the CLI's
//! `--json`): the same shapes everywhere, camelCase fields.

use std::ops::{Deref, DerefMut};

use mnemo::Engine;
use serde_json::{json, Value};

use crate::{out, out_tree, value, Json};
use mnemo::error::{Error, Result};
use mnemo::learn::pattern::Pattern;
use mnemo::record::{Observation, ObservationStatus, Outcome, Rule};
use mnemo::store::KvStore;

/// An observation status from its name.
pub fn observation_status(s: &str) -> Result<ObservationStatus> {
    match s {
        "open" => Ok(ObservationStatus::Open),
        "rejected" => Ok(ObservationStatus::Rejected),
        "merged" => Ok(ObservationStatus::Merged),
        other => Err(Error::InvalidInput(format!(
            "observation status {other:?} is not one of open, rejected, merged"
        ))),
    }
}

/// A rule as JSON: `{id, text, status, evidence, observation, pattern, createdAt, updatedAt}`
/// (`observation` is the source observation's id or null; `pattern` the machine-readable
/// pattern or null).
pub fn rule_json(r: &Rule) -> Value {
    json!({
        "id": r.id,
        "text": r.text,
        "status": r.status,
        "evidence": value(&r.evidence),
        "observation": r.observation.parse::<u64>().ok(),
        "pattern": Pattern::parse(&r.pattern).map(|p| p.to_json()),
        "supersededBy": r.superseded_by,
        "createdAt": r.created_at,
        "updatedAt": r.updated_at,
    })
}

/// An observation as JSON: its fields, its effective `confidence` and its parsed
/// `patternDetail`.
pub fn observation_json(o: &Observation) -> Value {
    let mut v = value(o);
    v["confidence"] = json!(o.confidence());
    v["patternDetail"] = Pattern::parse(&o.pattern).map_or(Value::Null, |p| p.to_json());
    v
}

impl<S: KvStore, R: Deref<Target = Engine<S>>> Json<R> {
    /// [`Engine::observations`] with statuses by name (all when empty), each with its
    /// effective `confidence` and parsed `patternDetail`.
    pub fn observations(&self, ns: &str, statuses: &[String]) -> Result<String> {
        let want = statuses.iter().map(|s| observation_status(s)).collect::<Result<Vec<_>>>()?;
        let list: Vec<Value> =
            self.0.observations(ns, &want)?.iter().map(observation_json).collect();
        out(list)
    }

    /// [`Engine::outcome_report`] as JSON.
    pub fn outcome_report(&self, ns: &str) -> Result<String> {
        out(self.0.outcome_report(ns)?)
    }
}

impl<S: KvStore, R: DerefMut<Target = Engine<S>>> Json<R> {
    /// [`Engine::signals_jsonl`]: all or nothing; returns `{ids, duplicates}` (a line imported
    /// before keeps its signal's id).
    pub fn signals(&mut self, ns: &str, jsonl: &str) -> Result<String> {
        out(self.0.signals_jsonl(ns, jsonl)?)
    }

    /// [`Engine::observe`] as JSON.
    pub fn observe(&mut self, ns: &str, now: i64) -> Result<String> {
        out(self.0.observe(ns, now)?)
    }

    /// [`Engine::feedback`] with `verdict` "right" or "wrong".
    pub fn feedback(&mut self, ns: &str, id: u64, verdict: &str, now: i64) -> Result<String> {
        let right = match verdict {
            "right" => true,
            "wrong" => false,
            other => {
                return Err(Error::InvalidInput(format!(
                    "feedback {other:?} is neither right nor wrong"
                )))
            }
        };
        let f = self.0.feedback(ns, id, right, now)?;
        let mut v = value(&f);
        v["observation"] = observation_json(&f.observation);
        out(v)
    }

    /// [`Engine::promote`] as JSON.
    pub fn promote(&mut self, ns: &str, now: i64) -> Result<String> {
        out(self.0.promote(ns, now)?)
    }

    /// [`Engine::outcome`] with `outcome` success, failure or partial; returns `{ok: true}`.
    pub fn outcome(
        &mut self,
        ns: &str,
        retrieval_id: u64,
        outcome: &str,
        now: i64,
    ) -> Result<String> {
        let o: Outcome = outcome.parse()?;
        self.0.outcome(ns, retrieval_id, o, now)?;
        out_tree(json!({ "ok": true }))
    }

    /// [`Engine::nightly`] as JSON.
    pub fn nightly(&mut self, ns: &str, now: i64, budget: Option<u64>) -> Result<String> {
        out(self.0.nightly(ns, now, budget)?)
    }

    /// [`Engine::recall_observations`] as JSON.
    pub fn recall_observations(
        &mut self,
        ns: &str,
        text: &str,
        vector: Option<&[f32]>,
        k: usize,
        now: i64,
    ) -> Result<String> {
        out(self.0.recall_observations(ns, text, vector, k, now)?)
    }

    /// [`Engine::add_rule`] with its status and origin by name; returns `{id}`. Only the user
    /// or an administrator may write a rule.
    pub fn add_rule(
        &mut self,
        ns: &str,
        text: &str,
        observation: &str,
        status: &str,
        origin: &str,
        now: i64,
    ) -> Result<String> {
        let (status, origin) = (status.parse()?, origin.parse()?);
        out_tree(json!({"id": self.0.add_rule(ns, text, observation, status, origin, now)?}))
    }

    /// [`Engine::set_rule_status`] with the status by name (candidate, active, demoted,
    /// retired…; superseded is the engine's to set); returns `{ok: true}`.
    pub fn set_rule_status(&mut self, ns: &str, id: u64, to: &str, now: i64) -> Result<String> {
        self.0.set_rule_status(ns, id, to.parse()?, now)?;
        out_tree(json!({"ok": true}))
    }

    /// One behaviour signal as JSON (`learn::input`); returns `{id}`.
    pub fn signal(&mut self, ns: &str, signal: &str) -> Result<String> {
        self.0.signal_json(ns, signal)
    }
}
