//! Merging rules: one statement remains where two would say the same thing.
//!
//! When [`Engine::promote`] is about to activate a rule, it compares it with the active rules:
//!
//! - **It subsumes active rules.** Their patterns (`learn::pattern`) are the same agent and
//!   behaviour under a narrower condition ("no semicolons" over "when segment is technical: no
//!   semicolons"; `words>=100` over `words>=200`; `weekday=fri` over `weekday=fri&time>=16:00`;
//!   see [`crate::learn::pattern::Condition::implies`]). The new rule becomes active and each
//!   narrower one is superseded by it (status superseded, `superseded_by` its id).
//! - **An active rule already says it.** An active rule's pattern is wider than (or equal to)
//!   the new one's, or — for a rule a person wrote, which has no pattern — its text says the
//!   same with the same polarity (E5 cosine ≥ [`polarity::DEFAULT_SAME_TOPIC`] and the same
//!   stance, `embed::polarity::stance`) and every content word of the new text is in it. The
//!   new rule is written superseded by that rule: its observation is settled, its history kept,
//!   and nothing new is injected.
//!
//! A superseded rule is never injected. When the rule that absorbed it stops being active
//! (the user says its observation is wrong, outcome tracking finds it harmful, or someone
//! sets its status), every rule it absorbed is active again: the narrower statements were
//! never refuted, only covered.

use crate::embed::{cosine, polarity, Role};
use crate::engine::Engine;
use crate::error::Result;
use crate::learn::pattern::Pattern;
use crate::record::{Rule, RuleStatus};
use crate::store::{Batch, KvStore, Namespace, Table};

/// How a rule about to be activated merges with the active ones.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Merge {
    /// An active rule that already says it: the new rule is written superseded by it.
    pub into: Option<u64>,
    /// Active rules it subsumes: superseded by the new rule.
    pub absorbs: Vec<u64>,
}

/// The content words of a rule text: terms of 3 letters or more that are not negation cues.
pub(crate) fn content_words(t: &str) -> std::collections::BTreeSet<String> {
    crate::index::terms::terms(t)
        .into_iter()
        .filter(|w| w.chars().count() >= 3 && polarity::find_cue(w).is_none())
        .collect()
}

impl<S: KvStore> Engine<S> {
    /// The stance of `text` toward each rule a person wrote among `active` (they have no
    /// pattern, so their texts are compared; needs an embedder, else none is returned). One
    /// embedding call serves both the contradiction check and merging.
    pub(crate) fn stances(
        &mut self,
        text: &str,
        active: &[&Rule],
    ) -> Result<Vec<(u64, polarity::Stance)>> {
        let written: Vec<&Rule> = active.iter().copied().filter(|r| r.pattern.is_empty()).collect();
        if self.embedder.is_none() || written.is_empty() {
            return Ok(Vec::new());
        }
        let mut texts: Vec<&str> = vec![text];
        texts.extend(written.iter().map(|r| r.text.as_str()));
        let v = self.embed(&texts, Role::Passage)?;
        Ok(written
            .iter()
            .zip(&v[1..])
            .map(|(r, e)| {
                let c = cosine(&v[0].vector, &e.vector);
                (r.id, polarity::stance(c, v[0].polarity, e.polarity, polarity::DEFAULT_SAME_TOPIC))
            })
            .collect())
    }
}

/// How a rule with `text` and pattern key `pattern` merges with `active` (module docs), given
/// its [`Engine::stances`] toward them.
pub(crate) fn merging(
    text: &str,
    pattern: &str,
    active: &[&Rule],
    stances: &[(u64, polarity::Stance)],
) -> Merge {
    let mut m = Merge::default();
    if let Some(new) = Pattern::parse(pattern) {
        for r in active {
            let Some(old) = Pattern::parse(&r.pattern) else { continue };
            if old.covers(&new) {
                m.into = m.into.or(Some(r.id));
            } else if new.covers(&old) {
                m.absorbs.push(r.id);
            }
        }
    }
    if m.into.is_some() {
        return Merge { into: m.into, absorbs: Vec::new() };
    }
    let words = content_words(text);
    for (id, stance) in stances {
        let Some(r) = active.iter().find(|r| r.id == *id) else { continue };
        if *stance == polarity::Stance::Same && words.is_subset(&content_words(&r.text)) {
            return Merge { into: Some(*id), absorbs: Vec::new() };
        }
    }
    m
}

impl<S: KvStore> Engine<S> {
    /// Stages, in `batch`, every rule superseded by `rule` back to active (it is leaving the
    /// active set); returns their ids.
    pub(crate) fn restore_absorbed(
        &self,
        ns: &Namespace,
        rule: u64,
        now: i64,
        batch: &mut Batch,
    ) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        for mut r in self.rules(ns.as_str(), &[RuleStatus::Superseded])? {
            if r.superseded_by == Some(rule) {
                r.status = RuleStatus::Active;
                r.superseded_by = None;
                r.updated_at = now;
                batch.put(ns.key(Table::Rule, &r.id.to_be_bytes()), r.encode());
                out.push(r.id);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::content_words;

    #[test]
    fn content_words_leave_out_cues_and_short_words() {
        let w = content_words("Never use semicolons in an email");
        assert!(w.contains("semicolons") && w.contains("email") && w.contains("use"));
        assert!(!w.contains("never") && !w.contains("in") && !w.contains("an"));
    }
}
