//! Outcome tracking: which entries preceded successes and which preceded failures.
//!
//! Each recall that updates access (`touch`) also appends one small retrieval record (the
//! episodes it returned and the rules active then; `record::outcome`), and returns its id.
//! The host reports how the task went with [`Engine::outcome`]. [`Engine::outcome_report`]
//! then judges every entry with at least `Learning::min_outcomes` outcomes against the
//! namespace's base rates, with the Wilson score interval at `Learning::outcome_z`
//! (2.576, 99 %):
//!
//! - **harmful**: the lower bound of its failure rate is above the namespace's failure rate
//!   (a poisoned lesson steering similar tasks wrong);
//! - **helpful**: the lower bound of its success rate is above the namespace's success rate;
//! - **rent**: returned in at least a quarter of all retrievals (and 10 or more), and neither
//!   (context paid for nothing);
//! - **neutral**, or **unproven** below the minimum.
//!
//! [`Engine::apply_outcomes`] (a nightly step) turns the verdicts into action: a harmful
//! episode's recall score is multiplied by `Learning::harmful_weight` (the explanation shows
//! `outcomeWeight`), and a harmful active rule is demoted to candidate. Outcomes an agent
//! reported through an untrusted channel ([`Engine::outcome_from`] with `Reporter::Agent`,
//! the MCP server's) count for episodes only: rules are judged on the host's outcomes against
//! the host's base rates, so no number of an agent's reports demotes a rule, and an agent's
//! report never replaces the host's for the same retrieval.

use std::collections::BTreeMap;

use crate::engine::learning::signals::free_id;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::learn::confidence::wilson;
use crate::record::outcome::{decode_outcome, encode_outcome, encode_weights, Reporter, Retrieval};
use crate::record::{Outcome, Rule, RuleStatus};
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};

/// What outcome tracking concluded about one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Precedes failures far more often than the base rate.
    Harmful,
    /// Precedes successes far more often than the base rate.
    Helpful,
    /// Returned constantly, with no effect either way.
    Rent,
    /// Enough outcomes, no clear effect.
    Neutral,
    /// Too few outcomes to judge.
    Unproven,
}

/// One entry's record.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryReport {
    /// `episode` or `rule`.
    pub kind: &'static str,
    /// Its id.
    pub id: u64,
    /// Times returned.
    pub retrieved: u32,
    /// Of those, how many were followed by a success.
    pub before_success: u32,
    /// By a failure.
    pub before_failure: u32,
    /// By a partial success.
    pub before_partial: u32,
    /// Wilson interval of its failure rate.
    pub failure_rate: (f64, f64),
    /// The verdict.
    pub verdict: Verdict,
}

/// [`Engine::outcome_report`]'s answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeReport {
    /// Retrievals logged.
    pub retrievals: u32,
    /// Of those, with an outcome.
    pub with_outcome: u32,
    /// Failures / outcomes over the namespace.
    pub base_failure_rate: f64,
    /// Successes / outcomes.
    pub base_success_rate: f64,
    /// Every entry returned at least once, harmful first, then by times returned.
    pub entries: Vec<EntryReport>,
}

/// The retrieval record for a recall at `now` that returned `episodes` while `rules` were
/// active, and its id.
pub(crate) fn log_retrieval(
    store: &impl KvStore,
    ns: &Namespace,
    now: i64,
    episodes: Vec<u64>,
    rules: Vec<u64>,
) -> Result<(u64, Vec<u8>)> {
    let id = free_id(store, ns, Table::Retrieval, now.max(0))?;
    Ok((id, Retrieval { at: now, episodes, rules }.encode()))
}

impl<S: KvStore> Engine<S> {
    /// Ids of the active rules of `ns` (what every context gets whole), read once and kept
    /// with the loaded namespace until a rule is written ([`Engine::write_rules`]).
    pub(crate) fn active_rule_ids(&mut self, ns: &Namespace) -> Result<Vec<u64>> {
        if let Some(ids) = self.namespaces.get(ns.as_str()).and_then(|s| s.active_rules.clone()) {
            return Ok(ids);
        }
        let mut ids = Vec::new();
        scan_all(&self.store, &ns.table_prefix(Table::Rule), None, |_, v| {
            // An unreadable record is left out (and listed by `quarantined`).
            let Ok(r) = Rule::decode(v) else { return Ok(()) };
            if r.status == RuleStatus::Active {
                ids.push(r.id);
            }
            Ok(())
        })?;
        if let Some(space) = self.namespaces.get_mut(ns.as_str()) {
            space.active_rules = Some(ids.clone());
        }
        Ok(ids)
    }

    /// Writes a batch that may change rules, and forgets the cached active rule ids.
    pub(crate) fn write_rules(&mut self, ns: &Namespace, batch: &Batch) -> Result<()> {
        self.store.write(batch)?;
        if let Some(space) = self.namespaces.get_mut(ns.as_str()) {
            space.active_rules = None;
        }
        Ok(())
    }

    /// Records how the task served by recall `retrieval_id` ended, as the host reports it;
    /// one batch.
    pub fn outcome(
        &mut self,
        ns: &str,
        retrieval_id: u64,
        outcome: Outcome,
        now: i64,
    ) -> Result<()> {
        self.outcome_from(ns, retrieval_id, outcome, now, Reporter::Host)
    }

    /// [`Engine::outcome`] with its reporter: an agent's outcome counts for episodes only,
    /// never against a rule ([`Reporter::Agent`]).
    pub fn outcome_from(
        &mut self,
        ns: &str,
        retrieval_id: u64,
        outcome: Outcome,
        now: i64,
        reporter: Reporter,
    ) -> Result<()> {
        let nsc = Namespace::new(ns)?;
        if outcome == Outcome::Unknown {
            return Err(Error::InvalidInput("an outcome is success, failure or partial".into()));
        }
        let id = retrieval_id.to_be_bytes();
        if self.store.get(&nsc.key(Table::Retrieval, &id))?.is_none() {
            return Err(Error::NotFound(format!(
                "retrieval {retrieval_id} in namespace {ns} (use the retrievalId a recall \
                 returned)"
            )));
        }
        let key = nsc.key(Table::Outcome, &id);
        if reporter == Reporter::Agent {
            if let Some(held) = self.store.get(&key)? {
                if decode_outcome(&held).is_ok_and(|(_, _, by)| by == Reporter::Host) {
                    return Err(Error::InvalidInput(format!(
                        "the host already reported how the task of retrieval {retrieval_id} \
                         went: an agent's report does not replace it"
                    )));
                }
            }
        }
        let mut batch = Batch::new();
        batch.put(key, encode_outcome(outcome, now, reporter));
        self.store.write(&batch)
    }

    /// Judges every entry that recalls returned (see the module docs).
    pub fn outcome_report(&self, ns: &str) -> Result<OutcomeReport> {
        let nsc = Namespace::new(ns)?;
        let mut outcomes: BTreeMap<Vec<u8>, (Outcome, Reporter)> = BTreeMap::new();
        let p = nsc.table_prefix(Table::Outcome);
        scan_all(&self.store, &p, None, |k, v| {
            let (o, _, reporter) = decode_outcome(v)?;
            outcomes.insert(k[p.len()..].to_vec(), (o, reporter));
            Ok(())
        })?;
        let mut per: BTreeMap<(&'static str, u64), [u32; 4]> = BTreeMap::new();
        let (mut retrievals, mut with_outcome, mut fails, mut wins) = (0u32, 0u32, 0u32, 0u32);
        // The host's outcomes alone: what rules are judged against (`Reporter::Agent`).
        let (mut host_with, mut host_fails, mut host_wins) = (0u32, 0u32, 0u32);
        let p = nsc.table_prefix(Table::Retrieval);
        scan_all(&self.store, &p, None, |k, v| {
            let r = Retrieval::decode(v)?;
            retrievals += 1;
            let (o, reporter) = outcomes.get(&k[p.len()..]).copied().unzip();
            let slot = match o {
                Some(Outcome::Success) => 1,
                Some(Outcome::Failure) => 2,
                Some(Outcome::Partial) => 3,
                _ => 0,
            };
            if slot > 0 {
                with_outcome += 1;
                fails += u32::from(slot == 2);
                wins += u32::from(slot == 1);
                if reporter != Some(Reporter::Agent) {
                    host_with += 1;
                    host_fails += u32::from(slot == 2);
                    host_wins += u32::from(slot == 1);
                }
            }
            let entries = r.episodes.iter().map(|e| ("episode", *e));
            for key in entries.chain(r.rules.iter().map(|x| ("rule", *x))) {
                let c = per.entry(key).or_default();
                c[0] += 1;
                // An agent's outcome never counts against a rule (`Reporter::Agent`).
                let counts = key.0 == "episode" || reporter != Some(Reporter::Agent);
                if slot > 0 && counts {
                    c[slot] += 1;
                }
            }
            Ok(())
        })?;
        let l = &self.config.learning;
        let rate = |k: u32, n: u32| if n == 0 { 0.0 } else { f64::from(k) / f64::from(n) };
        let (base_f, base_s) = (rate(fails, with_outcome), rate(wins, with_outcome));
        // A rule is judged against the host's outcomes only: an agent's reports neither count
        // for or against it nor move the rates it is compared with.
        let (rule_base_f, rule_base_s) = (rate(host_fails, host_with), rate(host_wins, host_with));
        let mut entries: Vec<EntryReport> = per
            .into_iter()
            .map(|((kind, id), c)| {
                let n = c[1] + c[2] + c[3];
                let failure_rate = wilson(c[2], n, l.outcome_z);
                let success_low = wilson(c[1], n, l.outcome_z).0;
                let (base_f, base_s) =
                    if kind == "rule" { (rule_base_f, rule_base_s) } else { (base_f, base_s) };
                let verdict = if n < l.min_outcomes {
                    Verdict::Unproven
                } else if failure_rate.0 > base_f {
                    Verdict::Harmful
                } else if success_low > base_s {
                    Verdict::Helpful
                } else if c[0] >= 10 && u64::from(c[0]) * 4 >= u64::from(retrievals) {
                    Verdict::Rent
                } else {
                    Verdict::Neutral
                };
                EntryReport {
                    kind,
                    id,
                    retrieved: c[0],
                    before_success: c[1],
                    before_failure: c[2],
                    before_partial: c[3],
                    failure_rate,
                    verdict,
                }
            })
            .collect();
        entries.sort_by(|a, b| {
            (b.verdict == Verdict::Harmful)
                .cmp(&(a.verdict == Verdict::Harmful))
                .then(b.retrieved.cmp(&a.retrieved))
                .then(a.kind.cmp(b.kind))
                .then(a.id.cmp(&b.id))
        });
        Ok(OutcomeReport {
            retrievals,
            with_outcome,
            base_failure_rate: base_f,
            base_success_rate: base_s,
            entries,
        })
    }

    /// Acts on [`Engine::outcome_report`]: harmful episodes get the recall factor
    /// `Learning::harmful_weight`, harmful active rules go back to candidate. One batch.
    /// Returns (episodes down-weighted, rules demoted).
    pub fn apply_outcomes(&mut self, ns: &str, now: i64) -> Result<(Vec<u64>, Vec<u64>)> {
        let nsc = Namespace::new(ns)?;
        let report = self.outcome_report(ns)?;
        let w = self.config.learning.harmful_weight;
        let harmful = |kind: &str| -> Vec<u64> {
            report
                .entries
                .iter()
                .filter(|e| e.kind == kind && e.verdict == Verdict::Harmful)
                .map(|e| e.id)
                .collect()
        };
        let (episodes, rule_ids) = (harmful("episode"), harmful("rule"));
        let mut batch = Batch::new();
        let weights: Vec<(u64, f32)> = episodes.iter().map(|id| (*id, w)).collect();
        batch.put(nsc.key(Table::Meta, b"outcome-weights"), encode_weights(&weights));
        let mut demoted = Vec::new();
        for id in rule_ids {
            let key = nsc.key(Table::Rule, &id.to_be_bytes());
            let Some(bytes) = self.store.get(&key)? else { continue };
            let mut rule = Rule::decode(&bytes)?;
            if rule.status == RuleStatus::Active {
                self.restore_absorbed(&nsc, id, now, &mut batch)?;
                rule.status = RuleStatus::Candidate;
                rule.updated_at = now;
                batch.put(key, rule.encode());
                demoted.push(id);
            }
        }
        self.write_rules(&nsc, &batch)?;
        if let Some(space) = self.namespaces.get_mut(ns) {
            space.outcome_weights = weights.into_iter().collect();
        }
        Ok((episodes, demoted))
    }
}
