//! The compaction steps of the nightly job: weekly summaries of raw episodes older than
//! `Compaction::weekly_after_days`, monthly overviews of weekly summaries older than
//! `Compaction::monthly_after_days` (grouping: `compact::group`; text: `compact::summary`).
//!
//! **Nothing is deleted.** One group is written as one atomic batch: the summary record (an
//! episode with tier 1 or 2, status active, event type `summary`, its structure as JSON in
//! `compact_summary`, the summarised ids in `evidence`), its vector, and every source rewritten
//! with `group` = the summary's id. Sources become `superseded`: they leave the BM25 and vector
//! indexes but stay readable (`episode`, `timeline`, a recall with `include_cold`).
//!
//! **Lessons stay hot.** A failure that carries a verdict, and a surprise, is summarised (its
//! line is in the summary, its id in the evidence) but stays raw and recallable: it is the
//! one record a lesson lives in, and burying it in a summary of routine work is exactly what
//! compaction is meant to prevent. Consolidation (`engine::consolidation`) evicts lessons once
//! a rule stands for them.
//!
//! **The summary's fields**: time = its newest source's; last access = the latest of theirs;
//! importance = the highest of its non-lesson sources' (a summary of routine successes stays
//! as low-value as they were; recall multiplies in the tier weight); entities = the sources'
//! entities (so an exact name or id still finds it); situation = the fields all sources share;
//! trust = the lowest of theirs; source = `ORIGIN:compaction`, ORIGIN the least trusted of
//! their origins (a summary of the user's own mail is hers; one that quotes an email is not);
//! expiry = the latest of theirs when every source expires.
//! **Its vector** is the normalised mean of its sources' vectors (weighted by episode count for
//! a monthly overview): no model runs during compaction, and the result is the same natively
//! and in wasm given the same vectors.
//!
//! With a host language model attached, the model may write the summary's text from the same
//! inputs; `compact::verify` checks it (token cap; no number, identifier or name the sources do
//! not hold) and the extractive text is kept when it fails.

pub(crate) mod plan;

pub(crate) use plan::PlanCache;

use super::{Engine, Loaded};
use crate::compact::group::{plan_monthly, plan_weekly, Item};
use crate::compact::summary::{monthly, weekly, Summary};
use crate::compact::verify;
use crate::error::{Error, Result};
use crate::record::episode::encode_vector;
use crate::record::{Episode, Origin, Status};
use crate::store::{Batch, KvStore, Namespace, Table};
use crate::time::DAY;

/// One summary a compaction step wrote.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compacted {
    /// The summary's episode id.
    pub summary: u64,
    /// 1 weekly, 2 monthly.
    pub tier: u8,
    /// Records it summarises.
    pub sources: Vec<u64>,
    /// Lessons among them that stay recallable.
    pub kept_hot: Vec<u64>,
    /// `extractive`, or `llm` when the host's model wrote the text and it passed the checks.
    pub written_by: String,
    /// Why the model's text was refused (empty when none was asked or it passed).
    pub llm_refused: String,
}

fn contact(e: &Episode) -> String {
    e.entities.first().map(|c| c.to_lowercase()).unwrap_or_default()
}

/// The normalised weighted mean of `vectors` (`None` when there is none).
pub(crate) fn centroid(vectors: &[(Vec<f32>, f32)]) -> Option<Vec<f32>> {
    let dim = vectors.first()?.0.len();
    let mut sum = vec![0f32; dim];
    for (v, w) in vectors.iter().filter(|(v, _)| v.len() == dim) {
        for (s, x) in sum.iter_mut().zip(v) {
            *s += x * w;
        }
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm > 0.0).then(|| sum.iter().map(|x| x / norm).collect())
}

impl<S: KvStore> Engine<S> {
    /// Writes the next compaction groups of tier `tier` (1 weekly, 2 monthly) for `ns` at `now`
    /// until about `budget` work units are spent; returns what was written, the units spent,
    /// and whether the tier is finished.
    pub(crate) fn compact_step(
        &mut self,
        ns: &Namespace,
        now: i64,
        tier: u8,
        budget: u64,
    ) -> Result<(Vec<Compacted>, u64, bool)> {
        let c = self.config.compaction.clone();
        let space = self.space(ns)?;
        let cached = space
            .compaction_plan
            .take()
            .filter(|p| (p.tier, p.now, p.generation) == (tier, now, space.generation));
        let (mut groups, mut units): (std::collections::VecDeque<Vec<u64>>, u64) = match cached {
            Some(p) => (p.groups, 1),
            None => {
                let (groups, units) = plan(space, now, tier, &c)?;
                (groups.into(), units)
            }
        };
        let mut out = Vec::new();
        while let Some(g) = groups.pop_front() {
            // At least one group per call, so that a budget smaller than the planning read
            // still makes progress.
            if units >= budget && !out.is_empty() {
                groups.push_front(g);
                break;
            }
            units += g.len() as u64 + 1;
            out.push(self.write_group(ns, tier, &g)?);
        }
        let finished = groups.is_empty();
        let space = self.space(ns)?;
        if !finished {
            let generation = space.generation;
            space.compaction_plan = Some(PlanCache { tier, now, generation, groups });
        }
        Ok((out, units, finished))
    }
}

/// Plans the groups of tier `tier` at `now` (`compact::group`); returns them and the records
/// read.
fn plan(
    space: &super::namespace::LoadedNamespace,
    now: i64,
    tier: u8,
    c: &crate::compact::Compaction,
) -> Result<(Vec<Vec<u64>>, u64)> {
    let after = if tier == 1 { c.weekly_after_days } else { c.monthly_after_days };
    let cutoff = now.saturating_sub(after.saturating_mul(DAY));
    let mut items = Vec::new();
    let mut units = 0u64;
    for h in space.episodes.hots() {
        let wanted = if tier == 1 {
            h.status == Status::Raw && h.tier == 0
        } else {
            h.status == Status::Active && h.tier == 1
        };
        if !wanted || h.created_at >= cutoff {
            continue;
        }
        let Some(e) = space.episodes.get(h.id)? else { continue };
        units += 1;
        if e.group != 0 {
            continue; // a lesson kept hot from an earlier summary
        }
        let contact = if tier == 1 {
            contact(&e)
        } else {
            parse_summary(&e).map(|s| s.contact).unwrap_or_else(|| contact(&e))
        };
        items.push(Item { id: e.id, created_at: e.created_at, agent: e.agent.clone(), contact });
    }
    items.sort_by_key(|it| it.id);
    let groups = if tier == 1 { plan_weekly(&items, now, c) } else { plan_monthly(&items) };
    Ok((groups, units))
}

impl<S: KvStore> Engine<S> {
    /// Summarises the records `ids` (oldest first) into one tier-`tier` summary, in one batch.
    fn write_group(&mut self, ns: &Namespace, tier: u8, ids: &[u64]) -> Result<Compacted> {
        let c = self.config.compaction.clone();
        let Loaded { space, store, .. } = self.loaded(ns)?;
        let mut sources = Vec::with_capacity(ids.len());
        let mut vectors = Vec::with_capacity(ids.len());
        for &id in ids {
            let e =
                space.episodes.get(id)?.ok_or_else(|| Error::NotFound(format!("episode {id}")))?;
            sources.push(e.into_owned());
            vectors.push(space.vector(&*store, ns, id)?);
        }
        let (mut summary, cap) = if tier == 1 {
            (weekly(&sources, &vectors, c.weekly_tokens, c.redundant_cosine), c.weekly_tokens)
        } else {
            let weeks: Vec<Summary> =
                sources.iter().map(|e| parse_summary(e).unwrap_or_default()).collect();
            let times: Vec<i64> = sources.iter().map(|e| e.created_at).collect();
            (monthly(&weeks, ids, &times, c.monthly_tokens), c.monthly_tokens)
        };
        let mut text = summary.text();
        let mut refused = String::new();
        if let Some(llm) = self.llm.as_mut() {
            let inputs: Vec<String> = sources
                .iter()
                .map(|e| {
                    if e.verdict.is_empty() {
                        e.text.clone()
                    } else {
                        format!("{} — {}", e.text, e.verdict)
                    }
                })
                .collect();
            let answer = llm.complete(&verify::prompt(&inputs, &summary, cap), cap as u32);
            match answer
                .map_err(|e| format!("the model gave no answer: {e}"))
                .and_then(|a| verify::check(&a, &inputs, cap))
            {
                Ok(t) => {
                    summary.written_by = "llm".into();
                    text = t;
                    if !summary.mentions.is_empty() {
                        text.push_str("\nMentions: ");
                        text.push_str(&summary.mentions.join("; "));
                    }
                }
                Err(why) => refused = why,
            }
        }
        let weights: Vec<(Vec<f32>, f32)> = sources
            .iter()
            .zip(&vectors)
            .filter_map(|(e, v)| {
                let w = if tier == 1 {
                    1.0
                } else {
                    parse_summary(e).map_or(1.0, |s| s.episodes.max(1) as f32)
                };
                v.clone().map(|v| (v, w))
            })
            .collect();
        let vector = centroid(&weights);
        let kept_hot: Vec<u64> = if tier == 1 {
            sources.iter().filter(|e| e.holds_lesson()).map(|e| e.id).collect()
        } else {
            Vec::new()
        };
        let space = self.space(ns)?;
        let id = space.next_id;
        let mut s = Episode::new(text, sources.iter().map(|e| e.created_at).max().unwrap_or(0));
        s.id = id;
        s.agent = summary.agent.clone();
        s.kind = "summary".into();
        s.tier = tier;
        s.status = Status::Active;
        // Its text is its sources' words: it is as trusted as the least trusted of them
        // (`ORIGIN:compaction`, the first untrusted origin, else the first source's).
        let origins: Vec<Origin> =
            sources.iter().map(|e| Origin::of_episode_source(&e.source)).collect();
        let origin = origins.iter().find(|o| !o.trusted()).or(origins.first());
        s.source = format!("{}:compaction", origin.copied().unwrap_or_default());
        s.last_accessed_at =
            sources.iter().map(|e| e.last_accessed_at).max().unwrap_or(s.created_at);
        s.access_count = sources.iter().map(|e| e.access_count).fold(0u32, u32::saturating_add);
        s.trust = sources.iter().map(|e| e.trust).fold(1.0, f32::min);
        s.importance = sources
            .iter()
            .filter(|e| !kept_hot.contains(&e.id))
            .map(|e| e.importance)
            .reduce(f32::max)
            .unwrap_or(1.0);
        for e in &sources {
            for x in &e.entities {
                if s.entities.len() < 64 && !s.entities.iter().any(|y| y.eq_ignore_ascii_case(x)) {
                    s.entities.push(x.clone());
                }
            }
            for t in &e.tags {
                if t == crate::trust::instructions::TAG && !s.tags.contains(t) {
                    s.tags.push(t.clone());
                }
            }
        }
        let first = &sources[0].situation;
        let shared = |f: fn(&crate::record::Situation) -> &String| {
            let v = f(first);
            if sources.iter().all(|e| f(&e.situation) == v) {
                v.clone()
            } else {
                String::new()
            }
        };
        s.situation.tool = shared(|x| &x.tool);
        s.situation.entity_type = shared(|x| &x.entity_type);
        s.situation.error_class = shared(|x| &x.error_class);
        s.situation.stage = shared(|x| &x.stage);
        if sources.iter().all(|e| e.expires_at != 0) {
            s.expires_at = sources.iter().map(|e| e.expires_at).max().unwrap_or(0);
        }
        s.evidence = ids.to_vec();
        s.compact_summary =
            serde_json::to_string(&summary).map_err(|e| Error::InvalidInput(e.to_string()))?;

        let mut batch = Batch::new();
        space.fold_usage(ns, &mut batch, true);
        let model = space.model.clone();
        batch.put(ns.key(Table::Episode, &id.to_be_bytes()), s.encode());
        if let Some(v) = &vector {
            batch.put(ns.key(Table::Vector, &id.to_be_bytes()), encode_vector(&model, v));
        }
        let mut changed = Vec::with_capacity(sources.len());
        for mut e in sources {
            e.group = id;
            if !kept_hot.contains(&e.id) {
                e.status = Status::Superseded;
            }
            batch.put(ns.key(Table::Episode, &e.id.to_be_bytes()), e.encode());
            if space.marks_dirty(e.id) {
                batch.put(super::persist::snapshot::dirty_key(ns, e.id), Vec::new());
            }
            changed.push(e);
        }
        batch.put(ns.key(Table::Meta, b"space"), super::persist::meta::encode_meta(id + 1, &model));
        self.store.write(&batch)?;
        let space = self.space(ns)?;
        space.folded();
        space.next_id = id + 1;
        for e in changed {
            space.mark_dirty(e.id);
            if e.is_live() {
                space.episodes.insert(e); // a lesson kept hot: same text, still indexed
            } else {
                space.keep_unindexed(e);
            }
        }
        match &vector {
            Some(v) => space.index(s, v),
            None => {
                space.bm25_insert(&s);
                space.by_time.insert((s.created_at, s.id));
                space.episodes.insert(s);
            }
        }
        Ok(Compacted {
            summary: id,
            tier,
            sources: ids.to_vec(),
            kept_hot,
            written_by: summary.written_by,
            llm_refused: refused,
        })
    }
}

/// The structure stored with a summary record (`None` for other episodes or unreadable JSON).
pub(crate) fn parse_summary(e: &Episode) -> Option<Summary> {
    if e.tier == 0 || e.compact_summary.is_empty() {
        return None;
    }
    serde_json::from_str(&e.compact_summary).ok()
}

#[cfg(test)]
mod tests {
    use super::centroid;

    #[test]
    fn centroid_is_the_normalised_weighted_mean() {
        let c = centroid(&[(vec![1.0, 0.0], 1.0), (vec![0.0, 1.0], 3.0)]).unwrap();
        assert!((c[0] - 0.316_227_8).abs() < 1e-6 && (c[1] - 0.948_683_3).abs() < 1e-6);
        assert!(centroid(&[]).is_none());
    }
}
