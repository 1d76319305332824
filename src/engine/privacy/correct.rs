//! Correcting one memory (the right to rectification): an episode's text replaced under the
//! same id, with the erasure's cascade, so nothing of the wrong version survives.
//!
//! The episode keeps its id, time, situation, tier and status; its text (and, when given, its
//! verdict) is replaced, passed through the same write-time hard rules as a new episode
//! (secrets masked, instruction-like untrusted text tagged), and embedded again. Everything
//! that derived from the wrong version goes exactly as when the episode is erased
//! ([`Erasure::Episode`]): signals tied to it, its id in retrievals and outcome weights,
//! observations' support from those signals, and the snapshot (it holds the old text and its
//! index terms). The store is vacuumed and scanned for the old text and verdict (those of 24
//! bytes or more that the new version does not itself contain), and a receipt with scope
//! `correction` comes back.

use crate::engine::privacy::erase::{Plan, MIN_TEXT_NEEDLE};
use crate::engine::{encode_vectors, Engine, Erasure, Receipt};
use crate::error::{Error, Result};
use crate::store::{KvStore, Namespace, Table};

/// What a correction changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Correction {
    /// The right text.
    pub text: String,
    /// The right verdict, when it changes too.
    pub verdict: Option<String>,
}

impl<S: KvStore> Engine<S> {
    /// Replaces episode `id`'s text (module docs). `vector` is the new text's embedding when
    /// the host supplies it; otherwise the attached embedder makes it. The returned receipt's
    /// scan searched the namespace for the old text.
    pub fn correct(
        &mut self,
        ns: &str,
        id: u64,
        correction: &Correction,
        vector: Option<&[f32]>,
        now: i64,
    ) -> Result<Receipt> {
        let nsc = Namespace::new(ns)?;
        if correction.text.trim().is_empty() {
            return Err(Error::InvalidInput(
                "a correction needs the right text; to delete the memory, erase it".into(),
            ));
        }
        let old = self
            .space(&nsc)?
            .episodes
            .get(id)?
            .map(|e| e.into_owned())
            .ok_or_else(|| Error::NotFound(format!("episode {id} in namespace {ns}")))?;
        if !old.evidence.is_empty() {
            return Err(Error::InvalidInput(format!(
                "episode {id} is a compaction summary, derived from episodes {:?}: correct \
                 those (the summary is rebuilt without the wrong text)",
                old.evidence
            )));
        }
        let mut new = old.clone();
        new.text = correction.text.clone();
        if new.group != 0 {
            // Its summary is dissolved with the wrong text (`engine::erase`); the episode
            // returns to what it was before compaction.
            new.group = 0;
            if new.status == crate::record::Status::Superseded && new.represented_by == 0 {
                new.status = crate::record::Status::Raw;
            }
        }
        if let Some(v) = &correction.verdict {
            new.verdict = v.clone();
        }
        if let Some(reason) = self.config.policy.sanitise(&mut new) {
            return Err(Error::InvalidInput(format!(
                "the corrected text cannot be stored: it {reason}; nothing was changed"
            )));
        }
        let v = self.vectors_for(&new.text, vector)?;
        let model = self.config.vector_model.clone();
        self.space(&nsc)?.check_model(&model)?;

        let mut plan: Plan = self.plan(&nsc, &Erasure::Episode(id))?;
        let keep = [new.text.to_ascii_lowercase(), new.verdict.to_ascii_lowercase()];
        plan.texts.retain(|t| {
            t.len() >= MIN_TEXT_NEEDLE && !keep.iter().any(|k| contains(k.as_bytes(), t))
        });
        let key = id.to_be_bytes();
        plan.batch.put(nsc.key(Table::Episode, &key), new.encode());
        plan.batch.put(nsc.key(Table::Vector, &key), encode_vectors(&model, &v));
        plan.kept = true;
        for layer in plan.tally.0.iter_mut() {
            if layer.layer == Table::Episode.name() || layer.layer == Table::Vector.name() {
                layer.rewritten += layer.deleted;
                layer.deleted = 0;
            }
        }
        self.commit(&nsc, "correction", Some(id.to_string()), plan, now)
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}
