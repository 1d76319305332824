//! Promotion of observations to procedural rules.
//!
//! [`Engine::promote`] turns an observation into an active rule when its confidence is high
//! or very-high, it implies a clear action, nobody said it is wrong, and either
//! `Learning::promote_wait_ms` (48 hours by default: `settings::PROMOTE_WAIT_MS`) have passed
//! since it was created and at least `MIN_OCCURRENCES` of its supporting signals came from the
//! host (not from an agent through MCP, `Signal::reporter`), or the user confirmed it
//! (`feedback.rs`). A rule that contradicts an active one
//! (the opposite behaviour under the same condition, or — with an embedder, for a rule a
//! person wrote — the opposite stance of the rule text, `embed::polarity::stance`, about the
//! same words) is not activated next to it: the stronger of the two stays active and the
//! other is kept as a candidate. One the active rules already say is merged
//! (`rule_merge.rs`).

use crate::embed::polarity;
use crate::engine::learning::observe::load_observations;
use crate::engine::learning::rule_merge::{content_words, merging};
use crate::engine::Engine;
use crate::error::Result;
use crate::learn::pattern::Pattern;
use crate::record::outcome::Reporter;
use crate::record::{Observation, ObservationStatus, Rule, RuleStatus, Signal};
use crate::store::{Batch, KvStore, Namespace, Table};

/// A rule [`Engine::promote`] activated.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Promoted {
    /// The new rule.
    pub rule: u64,
    /// The observation it came from.
    pub observation: u64,
    /// An active rule it replaced because they contradict each other.
    pub replaced: Option<u64>,
    /// Active rules it subsumes, now superseded by it (`engine::learning::rule_merge`).
    pub absorbed: Vec<u64>,
    /// An active rule that already says it: the new rule was written superseded by that one
    /// and is not injected (`engine::learning::rule_merge`).
    pub merged_into: Option<u64>,
}

/// True when two rules talk about the same things: at least half of the shorter one's words
/// (negation cues and words under 3 letters aside) are in the other. E5 puts unrelated
/// imperatives close ("Never use semicolons…" and "Always delete the lockfile…" at 0.90), so
/// a high cosine with opposite polarity alone does not make a contradiction.
fn share_words(a: &str, b: &str) -> bool {
    let (a, b) = (content_words(a), content_words(b));
    let shared = a.intersection(&b).count();
    let smaller = a.len().min(b.len());
    smaller > 0 && shared * 2 >= smaller
}

fn strength(o: &Observation) -> (u8, u32, u32) {
    (o.confidence() as u8, o.occurrences, (o.consistency * 1e6) as u32)
}

impl<S: KvStore> Engine<S> {
    /// How many of the signals behind `o` the host reported ([`Reporter::Host`]): an agent's
    /// signals (MCP) never make a rule by the wait alone, only once the user confirms it.
    fn host_support(&self, ns: &Namespace, o: &Observation) -> usize {
        o.support
            .iter()
            .filter(|id| {
                let stored = self.store.get(&ns.key(Table::Signal, &id.to_be_bytes()));
                matches!(stored, Ok(Some(b)) if Signal::decode(&b)
                    .is_ok_and(|s| s.reporter == Reporter::Host))
            })
            .count()
    }

    /// Promotes every observation that qualifies (see the module docs); one batch each.
    pub fn promote(&mut self, ns: &str, now: i64) -> Result<Vec<Promoted>> {
        let nsc = Namespace::new(ns)?;
        let observations = load_observations(&self.store, &nsc)?;
        let mut ready: Vec<&Observation> = observations
            .iter()
            .filter(|o| {
                o.status == ObservationStatus::Open
                    && o.rule.is_none()
                    && o.promotion_candidate
                    && o.occurrences >= crate::learn::detect::MIN_OCCURRENCES
                    && o.confidence().promotable()
                    && (o.confirmed_at.is_some()
                        || now - o.created_at >= self.config.learning.promote_wait_ms
                            && self.host_support(&nsc, o)
                                >= crate::learn::detect::MIN_OCCURRENCES as usize)
            })
            .collect();
        ready.sort_by(|a, b| strength(b).cmp(&strength(a)).then(a.id.cmp(&b.id)));
        let mut out = Vec::new();
        for o in ready {
            let mut rules = self.rules(ns, &[])?;
            let active: Vec<&Rule> =
                rules.iter().filter(|r| r.status == RuleStatus::Active).collect();
            let stances = self.stances(&o.quote, &active)?;
            let mut replaced = None;
            if let Some(other) = contradicting(&o.quote, &o.pattern, &active, &stances) {
                let theirs = observations.iter().find(|x| x.rule == Some(other));
                if theirs.is_some_and(|t| strength(t) >= strength(o)) || theirs.is_none() {
                    continue; // the active rule is at least as strong (or the user wrote it)
                }
                replaced = Some(other);
            }
            let merge = merging(&o.quote, &o.pattern, &active, &stances);
            if merge.into.is_some() {
                replaced = None; // nothing new is injected, so nothing is displaced
            }
            let id = rules.iter().map(|r| r.id).max().unwrap_or(0) + 1;
            let rule = Rule {
                id,
                text: o.quote.clone(),
                observation: o.id.to_string(),
                status: if merge.into.is_some() {
                    RuleStatus::Superseded
                } else {
                    RuleStatus::Active
                },
                created_at: now,
                updated_at: now,
                evidence: o.evidence.clone(),
                pattern: o.pattern.clone(),
                superseded_by: merge.into,
            };
            let mut batch = Batch::new();
            batch.put(nsc.key(Table::Rule, &id.to_be_bytes()), rule.encode());
            for r in rules.iter_mut() {
                if Some(r.id) == replaced {
                    r.status = RuleStatus::Candidate;
                } else if merge.absorbs.contains(&r.id) {
                    r.status = RuleStatus::Superseded;
                    r.superseded_by = Some(id);
                } else {
                    continue;
                }
                r.updated_at = now;
                batch.put(nsc.key(Table::Rule, &r.id.to_be_bytes()), r.encode());
            }
            let mut updated = o.clone();
            updated.rule = Some(id);
            updated.updated_at = now;
            batch.put(nsc.key(Table::Observation, &o.id.to_be_bytes()), updated.encode());
            self.write_rules(&nsc, &batch)?;
            out.push(Promoted {
                rule: id,
                observation: o.id,
                replaced,
                absorbed: merge.absorbs,
                merged_into: merge.into,
            });
        }
        Ok(out)
    }
}

/// The active rule that `text` (with pattern key `pattern`) contradicts, if any, given its
/// [`Engine::stances`] toward the rules a person wrote.
fn contradicting(
    text: &str,
    pattern: &str,
    active: &[&Rule],
    stances: &[(u64, polarity::Stance)],
) -> Option<u64> {
    let opposite = Pattern::parse(pattern).and_then(|p| p.opposite_key());
    if let Some(r) =
        active.iter().find(|r| !r.pattern.is_empty() && Some(&r.pattern) == opposite.as_ref())
    {
        return Some(r.id);
    }
    // Promoted rules contradict by pattern, exactly; rules a person wrote have no pattern,
    // so their stance is read from the texts.
    stances.iter().find_map(|(id, stance)| {
        let shares = active.iter().any(|r| r.id == *id && share_words(text, &r.text));
        (*stance == polarity::Stance::Opposite && shares).then_some(*id)
    })
}

#[cfg(test)]
mod tests {
    use super::share_words;

    #[test]
    fn contradictions_need_shared_words() {
        assert!(share_words("Never use semicolons — the user removes them", "Use semicolons"));
        assert!(!share_words(
            "Never use semicolons — the user removes them",
            "Always delete the lockfile and the npm cache before reinstalling"
        ));
    }
}
