//! The user's verdict on an observation.
//!
//! - **Right** raises the observation's confidence one band and records the confirmation
//!   (which also waives the 48-hour wait before promotion, `promotion.rs`: the wait exists so
//!   the user can reject a lesson before it is acted on, and they have just accepted it).
//! - **Wrong** marks it rejected, deletes its embedding, demotes the rule promoted from it,
//!   marks the episodes its signals point at (and a lesson observation's episodes) rejected,
//!   and writes a reverse signal: the detector skips the pattern (and its near-duplicates) for
//!   good. One atomic batch.

use crate::engine::learning::signals::free_id;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::record::{Observation, ObservationStatus, Rule, RuleStatus, Signal, SignalKind, Status};
use crate::store::{Batch, KvStore, Namespace, Table};

/// What [`Engine::feedback`] did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Feedback {
    /// The observation, as it is now.
    pub observation: Observation,
    /// Rules demoted (wrong).
    pub demoted_rules: Vec<u64>,
    /// Episodes marked rejected (wrong).
    pub rejected_episodes: Vec<u64>,
    /// The reverse signal written (wrong).
    pub reverse_signal: Option<u64>,
}

impl<S: KvStore> Engine<S> {
    /// The user's verdict on observation `id`: right (`true`) or wrong (see the module docs).
    pub fn feedback(&mut self, ns: &str, id: u64, right: bool, now: i64) -> Result<Feedback> {
        let nsc = Namespace::new(ns)?;
        let mut o = self.observation(ns, id)?;
        let mut batch = Batch::new();
        // First, so that the status changes below win (last write wins in a batch).
        self.space(&nsc)?.fold_usage(&nsc, &mut batch, true);
        let (mut demoted_rules, mut rejected_episodes, mut reverse_signal) =
            (Vec::new(), Vec::new(), None);
        let mut staged = Vec::new();
        if right {
            if o.status == ObservationStatus::Rejected {
                return Err(Error::InvalidInput(format!(
                    "observation {id} was marked wrong; wrong is final (the pattern is never \
                     proposed again)"
                )));
            }
            o.boost = o.boost.saturating_add(1).min(3);
            o.confirmed_at = Some(now);
        } else {
            o.status = ObservationStatus::Rejected;
            batch.delete(nsc.key(Table::ObservationVector, &id.to_be_bytes()));
            if let Some(rule_id) = o.rule {
                let key = nsc.key(Table::Rule, &rule_id.to_be_bytes());
                if let Some(bytes) = self.store.get(&key)? {
                    let mut rule = Rule::decode(&bytes)?;
                    if rule.status != RuleStatus::Demoted {
                        if rule.status == RuleStatus::Active {
                            self.restore_absorbed(&nsc, rule_id, now, &mut batch)?;
                        }
                        rule.status = RuleStatus::Demoted;
                        rule.superseded_by = None;
                        rule.updated_at = now;
                        batch.put(key, rule.encode());
                        demoted_rules.push(rule_id);
                    }
                }
            }
            // The episodes behind it: those its signals point at, and for a lesson observation
            // of consolidation the episodes it was clustered from.
            let mut sources = Vec::new();
            for sid in &o.support {
                let Some(s) = self.signal_by_id(ns, *sid)? else { continue };
                sources.extend(s.episode);
            }
            sources.extend(o.episodes.iter().copied());
            for e in sources {
                if rejected_episodes.contains(&e) {
                    continue;
                }
                match self.stage_status(&nsc, e, Status::Rejected, &mut batch) {
                    Ok(ep) => {
                        rejected_episodes.push(e);
                        staged.push(ep);
                    }
                    Err(err) if err.code() == "NOT_FOUND" => {}
                    Err(err) => return Err(err),
                }
            }
            let reverse = Signal {
                id: free_id(&self.store, &nsc, Table::Signal, now.max(0))?,
                ts: now.max(0),
                offset_min: 0,
                kind: SignalKind::Reverse,
                agent: o.agent.clone(),
                category: o.category,
                category_given: true,
                situation: Default::default(),
                detail: o.pattern.clone(),
                correction: None,
                source: "user".into(),
                trust: 1.0,
                episode: None,
                features: None,
                texts: None,
                reporter: crate::record::outcome::Reporter::Host,
            };
            batch.put(nsc.key(Table::Signal, &reverse.id.to_be_bytes()), reverse.encode());
            reverse_signal = Some(reverse.id);
        }
        o.updated_at = now;
        batch.put(nsc.key(Table::Observation, &id.to_be_bytes()), o.encode());
        self.write_rules(&nsc, &batch)?;
        self.space(&nsc)?.folded();
        for ep in staged {
            self.apply_status(&nsc, ep)?;
        }
        Ok(Feedback { observation: o, demoted_rules, rejected_episodes, reverse_signal })
    }
}
