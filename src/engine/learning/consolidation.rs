//! Consolidation: lessons that keep recurring become one observation, then one rule, and the
//! episodes the rule stands for leave recall.
//!
//! 1. **Cluster.** Recallable lesson episodes (a failure with a verdict, or a surprise) are
//!    keyed by situation — agent, tool, entity type, error class, stage; never by prose — and,
//!    within a key, linked when their embeddings' cosine is at least
//!    [`Consolidation::cluster_cosine`] (single link, ids ascending, so the result does not
//!    depend on order).
//! 2. **Promote.** A cluster with [`Consolidation::min_support`] episodes (3) on as many
//!    distinct days becomes (or recounts) a lesson observation: pattern
//!    `agent|exception:CLASS|tool=TOOL` (`custom:lesson` when there is no error class; the
//!    condition is the tool, else the stage, else the entity type), quote "When … : verdict"
//!    from the cluster's most central episode, occurrences = the cluster, opportunities = the
//!    failures and surprises of that situation. One failure, or one incident logged several
//!    times in a day, is never generalised. From there the observation takes the same path as
//!    one counted from signals: the user may mark it right or wrong (a wrong one never comes
//!    back: its pattern is blocked), and promotion needs a high confidence (≥ 5 occurrences,
//!    consistency > 0.8) and the 48-hour wait or the user's "right". Contradicting rules are
//!    resolved at promotion (`engine::feedback`): never two active rules that disagree; the
//!    weaker one is kept as a candidate with its history.
//! 3. **Evict.** Once a rule promoted from a lesson observation is active, the episodes it was
//!    clustered from leave recall: status superseded, `represented_by` = the rule (cold: kept,
//!    readable, reached by a recall with `include_cold`). Rules that stop earning retrieval are
//!    demoted by outcome tracking (`engine::outcomes`).
//! 4. **Recurrence trigger.** Besides the nightly pass, [`Engine::remember`] counts the lessons
//!    stored per situation key since the last pass; when one key reaches
//!    [`Consolidation::recurrence`], that key is clustered at once. The counts live in memory
//!    (a reopened namespace starts from zero: the nightly pass covers what they miss).

use std::collections::{BTreeMap, BTreeSet};

use crate::embed::cosine;
use crate::engine::learning::observe::load_observations;
use crate::engine::{Engine, Loaded};
use crate::error::Result;
use crate::learn::confidence::Confidence;
use crate::record::episode::encode_vector;
use crate::record::{Category, Episode, Observation, ObservationStatus, RuleStatus, Status};
use crate::store::{Batch, KvStore, Namespace, Table};
use crate::time::DAY;

fn pattern_of(e: &Episode) -> String {
    let s = &e.situation;
    let behaviour = if s.error_class.is_empty() {
        "custom:lesson".to_string()
    } else {
        format!("exception:{}", s.error_class.to_lowercase())
    };
    let condition = [("tool", &s.tool), ("stage", &s.stage), ("entity_type", &s.entity_type)]
        .into_iter()
        .find(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", v.to_lowercase()))
        .unwrap_or_default();
    format!("{}|{behaviour}|{condition}", e.agent)
}

fn words(s: &str, n: usize) -> String {
    let w: Vec<&str> = s.split_whitespace().take(n).collect();
    w.join(" ")
}

/// Single-link clusters of `members` (indexes into `vectors`) at `threshold`.
fn clusters(vectors: &[Vec<f32>], threshold: f32) -> Vec<Vec<usize>> {
    let n = vectors.len();
    let mut root: Vec<usize> = (0..n).collect();
    fn find(root: &mut [usize], mut i: usize) -> usize {
        while root[i] != i {
            root[i] = root[root[i]];
            i = root[i];
        }
        i
    }
    for i in 0..n {
        for j in i + 1..n {
            if vectors[i].len() == vectors[j].len() && cosine(&vectors[i], &vectors[j]) >= threshold
            {
                let (a, b) = (find(&mut root, i), find(&mut root, j));
                root[a.max(b)] = a.min(b);
            }
        }
    }
    let mut out: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = find(&mut root, i);
        out.entry(r).or_default().push(i);
    }
    out.into_values().collect()
}

impl<S: KvStore> Engine<S> {
    /// Clusters the recallable lessons of `ns` (of situation key `only`, or all) and writes or
    /// recounts their observations; returns the observation ids and the work units spent.
    pub(crate) fn cluster_lessons(&mut self, ns: &Namespace, now: i64) -> Result<(Vec<u64>, u64)> {
        self.cluster_key(ns, now, None)
    }

    pub(crate) fn cluster_key(
        &mut self,
        ns: &Namespace,
        now: i64,
        only: Option<&str>,
    ) -> Result<(Vec<u64>, u64)> {
        let cfg = self.config.consolidation.clone();
        let space = self.space(ns)?;
        let mut by_key: BTreeMap<String, Vec<Episode>> = BTreeMap::new();
        let mut units = 0u64;
        for h in space.episodes.hots() {
            if !h.recallable(now) || h.tier != 0 || h.created_at > now {
                continue;
            }
            let Some(e) = space.episodes.get(h.id)? else { continue };
            if !e.holds_lesson() {
                continue;
            }
            units += 1;
            if let Some(k) = e.situation_key().filter(|k| only.is_none_or(|o| o == k)) {
                by_key.entry(k).or_default().push(e.into_owned());
            }
        }
        let mut existing = load_observations(&self.store, ns)?;
        let blocked = crate::engine::learning::observe::blocked(&existing);
        let mut next = existing.iter().map(|o| o.id).max().unwrap_or(0) + 1;
        let mut out = Vec::new();
        let mut new_count = 0;
        for (_, mut eps) in by_key {
            eps.sort_by_key(|e| e.id);
            let mut vectors = Vec::with_capacity(eps.len());
            let mut kept = Vec::with_capacity(eps.len());
            let Loaded { space, store, .. } = self.loaded(ns)?;
            for e in eps {
                if let Some(v) = space.vector(&*store, ns, e.id)? {
                    vectors.push(v);
                    kept.push(e);
                }
            }
            let opportunities = kept.len() as u32;
            for cluster in clusters(&vectors, cfg.cluster_cosine) {
                let days: BTreeSet<i64> =
                    cluster.iter().map(|&i| kept[i].created_at.div_euclid(DAY)).collect();
                if cluster.len() < cfg.min_support || days.len() < cfg.min_support {
                    continue;
                }
                // The most central member states the lesson.
                let central = *cluster
                    .iter()
                    .max_by(|&&a, &&b| {
                        let s = |i: usize| {
                            cluster.iter().map(|&j| cosine(&vectors[i], &vectors[j])).sum::<f32>()
                        };
                        s(a).total_cmp(&s(b)).then(b.cmp(&a))
                    })
                    .expect("clusters are not empty");
                let c = &kept[central];
                let pattern = pattern_of(c);
                if blocked.contains(&pattern) {
                    continue;
                }
                let s = &c.situation;
                let what = [&s.tool, &s.stage, &s.entity_type]
                    .into_iter()
                    .find(|x| !x.is_empty())
                    .cloned()
                    .unwrap_or_default();
                let class = if s.error_class.is_empty() {
                    "an error".to_string()
                } else {
                    s.error_class.clone()
                };
                let lesson = if c.verdict.is_empty() { c.text.clone() } else { c.verdict.clone() };
                let quote = words(&format!("When {what} fails with {class}: {lesson}"), 25);
                let ids: Vec<u64> = cluster.iter().map(|&i| kept[i].id).collect();
                let list: Vec<String> = ids.iter().take(8).map(|i| format!("#{i}")).collect();
                let evidence = words(
                    &format!(
                        "{} of {} lessons on {} days share this cause (episodes {})",
                        ids.len(),
                        opportunities,
                        days.len(),
                        list.join(", ")
                    ),
                    40,
                );
                let occurrences = ids.len() as u32;
                let counted =
                    Confidence::of(occurrences, opportunities, 0).unwrap_or(Confidence::Low);
                let pos = existing
                    .iter()
                    .position(|o| o.pattern == pattern && o.status == ObservationStatus::Open);
                let mut o = match pos {
                    Some(i) => existing[i].clone(),
                    None if new_count >= self.config.learning.max_new => continue,
                    None => {
                        new_count += 1;
                        next += 1;
                        Observation::open(
                            next - 1,
                            pattern.clone(),
                            Category::Tools,
                            c.agent.clone(),
                            now,
                        )
                    }
                };
                let before = o.clone();
                o.quote = quote;
                o.evidence = evidence;
                o.occurrences = occurrences;
                o.opportunities = opportunities;
                o.consistency = occurrences as f32 / opportunities.max(1) as f32;
                o.counted = counted;
                o.promotion_candidate = true;
                o.first_seen = cluster.iter().map(|&i| kept[i].created_at).min().unwrap_or(0);
                o.last_seen = cluster.iter().map(|&i| kept[i].created_at).max().unwrap_or(0);
                o.episodes = ids;
                if o == before {
                    continue;
                }
                o.updated_at = now;
                let members: Vec<(Vec<f32>, f32)> =
                    cluster.iter().map(|&i| (vectors[i].clone(), 1.0)).collect();
                let mean = crate::engine::compaction::centroid(&members)
                    .unwrap_or_else(|| vectors[central].clone());
                let mut batch = Batch::new();
                batch.put(ns.key(Table::Observation, &o.id.to_be_bytes()), o.encode());
                let model = self.namespaces[ns.as_str()].model.clone();
                batch.put(
                    ns.key(Table::ObservationVector, &o.id.to_be_bytes()),
                    encode_vector(&model, &mean),
                );
                self.store.write(&batch)?;
                units += 1;
                out.push(o.id);
                match pos {
                    Some(i) => existing[i] = o,
                    None => existing.push(o),
                }
            }
        }
        if let Some(space) = self.namespaces.get_mut(ns.as_str()) {
            match only {
                Some(k) => {
                    space.recurrence.remove(k);
                }
                None => space.recurrence.clear(),
            }
        }
        Ok((out, units))
    }

    /// Evicts from recall the episodes that active rules promoted from lesson observations now
    /// represent; returns their ids and the work units spent.
    pub(crate) fn evict_represented(
        &mut self,
        ns: &Namespace,
        _now: i64,
    ) -> Result<(Vec<u64>, u64)> {
        let observations = load_observations(&self.store, ns)?;
        let mut units = observations.len() as u64;
        // A rule stands for its episodes while it is active, or superseded by an active rule
        // that says the same and more (`engine::learning::rule_merge`).
        let rules = self.rules(ns.as_str(), &[RuleStatus::Active, RuleStatus::Superseded])?;
        let active: Vec<u64> =
            rules.iter().filter(|r| r.status == RuleStatus::Active).map(|r| r.id).collect();
        let standing = |id: u64| {
            rules.iter().any(|x| {
                x.id == id
                    && (active.contains(&id)
                        || x.superseded_by.is_some_and(|w| active.contains(&w)))
            })
        };
        let mut out = Vec::new();
        for o in observations.iter().filter(|o| !o.episodes.is_empty()) {
            let Some(rule) = o.rule.filter(|r| standing(*r)) else { continue };
            let mut batch = Batch::new();
            let mut changed = Vec::new();
            let space = self.space(ns)?;
            // First, so that the changes below win (last write wins in a batch).
            space.fold_usage(ns, &mut batch, true);
            for &id in &o.episodes {
                let Some(e) = space.episodes.get(id)? else { continue };
                if !e.is_live() {
                    continue;
                }
                let mut e = e.into_owned();
                e.status = Status::Superseded;
                e.represented_by = rule;
                batch.put(ns.key(Table::Episode, &id.to_be_bytes()), e.encode());
                if space.marks_dirty(id) {
                    batch.put(crate::engine::persist::snapshot::dirty_key(ns, id), Vec::new());
                }
                changed.push(e);
            }
            if changed.is_empty() {
                continue;
            }
            self.store.write(&batch)?;
            units += changed.len() as u64;
            let space = self.space(ns)?;
            space.folded();
            for e in changed {
                out.push(e.id);
                space.mark_dirty(e.id);
                space.keep_unindexed(e);
            }
        }
        Ok((out, units))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_link_clusters() {
        let v = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![0.99, 0.141], vec![0.96, 0.28]];
        assert_eq!(clusters(&v, 0.95), vec![vec![0, 2, 3], vec![1]]);
    }

    #[test]
    fn patterns_key_by_situation() {
        let mut e = Episode::new("npm ci failed", 0);
        e.agent = "ci".into();
        e.situation.tool = "NPM".into();
        e.situation.error_class = "lockfile".into();
        assert_eq!(pattern_of(&e), "ci|exception:lockfile|tool=npm");
        assert!(crate::learn::pattern::Pattern::parse(&pattern_of(&e)).is_some());
        assert_eq!(e.situation_key().as_deref(), Some("ci|npm||lockfile|"));
        assert!(Episode::new("x", 0).situation_key().is_none());
    }
}
