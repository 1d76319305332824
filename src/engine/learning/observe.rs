//! The observation engine's store side: run the detector over the last
//! `Learning::window_days` of signals, then write what it found.
//!
//! Writing, strongest first: a pattern identical to an existing observation's updates that
//! row (counts, evidence, support); one whose quote's embedding is within cosine distance
//! 0.15 (`Learning::duplicate_cosine`) of an observation of the same agent and behaviour is a
//! near-duplicate and updates that row too (taking the better-supported condition); a pattern
//! the user rejected — identical, or a near-duplicate of a rejected one — is skipped for
//! good; anything else is inserted, at most `Learning::max_new` per run. Without an embedder
//! only identical patterns are merged. Each write is one batch (the observation and its
//! vector).

use std::collections::BTreeSet;

use crate::embed::{cosine, Role};
use crate::engine::learning::signals::scan_signals;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::learn::confidence::Confidence;
use crate::learn::detect::{Detector, Found};
use crate::learn::pattern::Pattern;
use crate::learn::phrasing;
use crate::record::episode::{decode_vector, encode_vector};
use crate::record::{Observation, ObservationStatus, SignalKind};
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};
use crate::time::DAY;

/// What a detection run wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    /// Signals read.
    pub signals: usize,
    /// Patterns the detector found.
    pub found: usize,
    /// New observations.
    pub inserted: Vec<u64>,
    /// Existing observations updated with new counts.
    pub updated: Vec<u64>,
    /// Patterns skipped because the user rejected them (or a near-duplicate).
    pub blocked: usize,
    /// Patterns left for a later run (over the per-run maximum).
    pub deferred: usize,
}

/// One observation recalled, with its score.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservationHit {
    /// The observation.
    pub observation: Observation,
    /// Cosine of the query and its quote.
    pub cosine: f32,
    /// exp(−λ·days since its last recount), λ = `Learning::observation_lambda`.
    pub recency: f32,
    /// cosine × recency.
    pub score: f32,
}

fn obs_key(ns: &Namespace, id: u64) -> Vec<u8> {
    ns.key(Table::Observation, &id.to_be_bytes())
}

pub(crate) fn load_observations(store: &impl KvStore, ns: &Namespace) -> Result<Vec<Observation>> {
    let mut out = Vec::new();
    scan_all(store, &ns.table_prefix(Table::Observation), None, |_, v| {
        // An unreadable record is left out (and listed by `quarantined`).
        out.extend(Observation::decode(v).ok());
        Ok(())
    })?;
    Ok(out)
}

fn read_obs_vector(store: &impl KvStore, ns: &Namespace, id: u64) -> Result<Option<Vec<f32>>> {
    match store.get(&ns.key(Table::ObservationVector, &id.to_be_bytes()))? {
        Some(b) => Ok(Some(decode_vector(&b)?.1)),
        None => Ok(None),
    }
}

/// Pattern keys the user rejected: rejected observations, and reverse signals.
/// Their refinements (the same family: another threshold on the same attribute) are blocked
/// too, by family key.
pub(crate) fn blocked(observations: &[Observation]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for o in observations.iter().filter(|o| o.status == ObservationStatus::Rejected) {
        out.insert(o.pattern.clone());
        if let Some(p) = Pattern::parse(&o.pattern) {
            out.insert(p.family_key());
        }
    }
    out
}

fn behaviour_of(pattern: &str) -> Option<(String, String)> {
    let p = Pattern::parse(pattern)?;
    Some((p.agent, p.behaviour.key()))
}

impl<S: KvStore> Engine<S> {
    /// Runs the detector over the last `Learning::window_days` of signals before `now` and
    /// writes what it found (see the module docs).
    pub fn observe(&mut self, ns: &str, now: i64) -> Result<Observed> {
        let nsc = Namespace::new(ns)?;
        let mut det = Detector::new();
        let mut reverse = BTreeSet::new();
        let (n, _) = self.feed(&nsc, now, &mut det, &mut reverse, None, usize::MAX)?;
        det.start_pass2();
        self.feed(&nsc, now, &mut det, &mut reverse, None, usize::MAX)?;
        let mut r = self.write_found(ns, &det, &reverse, now)?;
        r.signals = n;
        Ok(r)
    }

    /// Feeds the detector's current pass up to `limit` signals of the window before `now`,
    /// after signal `after`; collects the patterns reverse signals block. Returns how many
    /// were read and the last id.
    pub(crate) fn feed(
        &self,
        ns: &Namespace,
        now: i64,
        det: &mut Detector,
        reverse: &mut BTreeSet<String>,
        after: Option<u64>,
        limit: usize,
    ) -> Result<(usize, Option<u64>)> {
        let from = now.saturating_sub(self.config.learning.window_days * DAY);
        scan_signals(&self.store, ns, from, now.saturating_add(1), after, limit, |s| {
            // A signal reported from a web page, an email or a tool's output is not the user's
            // behaviour: it is kept, but never counted towards an observation (or a rule).
            use crate::record::Origin;
            let origin = Origin::of_episode_source(&s.source);
            if matches!(origin, Origin::Web | Origin::Email | Origin::Tool) {
                return Ok(());
            }
            if s.kind == SignalKind::Reverse {
                reverse.insert(s.detail.clone());
            }
            det.feed(&s);
            Ok(())
        })
    }

    /// Takes the detector's findings, strongest first, past the patterns the user rejected
    /// (and those `reverse` signals name), and writes them; see the module docs.
    pub(crate) fn write_found(
        &mut self,
        ns: &str,
        det: &Detector,
        reverse: &BTreeSet<String>,
        now: i64,
    ) -> Result<Observed> {
        let nsc = Namespace::new(ns)?;
        let mut existing = load_observations(&self.store, &nsc)?;
        let mut blocked_keys = blocked(&existing);
        blocked_keys.extend(reverse.iter().cloned());
        let found = det.finish(&blocked_keys);
        let mut next = existing.iter().map(|o| o.id).max().unwrap_or(0) + 1;
        let mut r = Observed { found: found.len(), ..Observed::default() };
        for f in found {
            let key = f.pattern.key();
            if blocked_keys.contains(&key) || blocked_keys.contains(&f.pattern.family_key()) {
                r.blocked += 1;
                continue;
            }
            let quote = f.pattern.quote();
            // The same pattern, or a refinement of it (another threshold on the same
            // attribute): one observation follows the best condition of its family.
            let family = f.pattern.family_key();
            let same = existing
                .iter()
                .position(|o| o.pattern == key && o.status == ObservationStatus::Open)
                .or_else(|| {
                    existing.iter().position(|o| {
                        o.status == ObservationStatus::Open
                            && Pattern::parse(&o.pattern).is_some_and(|p| p.family_key() == family)
                    })
                });
            let (vector, near) = match (same, self.embedder.is_some()) {
                (None, true) => {
                    let v = self.embed(&[&quote], Role::Passage)?.remove(0).vector;
                    let near = self.near_duplicate(&nsc, &existing, &f, &v)?;
                    (Some(v), near)
                }
                _ => (None, None),
            };
            let target = match (same, near) {
                (Some(i), _) => Some(i),
                (None, Some(i)) if existing[i].status == ObservationStatus::Rejected => {
                    r.blocked += 1;
                    continue;
                }
                (None, Some(i)) => Some(i),
                (None, None) => None,
            };
            let mut o = match target {
                Some(i) => existing[i].clone(),
                None if r.inserted.len() >= self.config.learning.max_new => {
                    r.deferred += 1;
                    continue;
                }
                None => Observation {
                    quote: quote.clone(),
                    counted: f.confidence,
                    first_seen: f.first_seen,
                    last_seen: f.last_seen,
                    ..Observation::open(next, key.clone(), f.category, f.pattern.agent.clone(), now)
                },
            };
            let mut batch = Batch::new();
            if o.pattern != key {
                // A refinement or near-duplicate takes the better-supported condition; the
                // rule promoted from it, if any, states the refined one.
                o.pattern = key.clone();
                o.quote = quote.clone();
                o.phrased_by = "engine".into();
                if let Some(rule_id) = o.rule {
                    let rk = nsc.key(Table::Rule, &rule_id.to_be_bytes());
                    if let Some(bytes) = self.store.get(&rk)? {
                        let mut rule = crate::record::Rule::decode(&bytes)?;
                        rule.text = quote.clone();
                        rule.pattern = key.clone();
                        rule.evidence = f.evidence();
                        rule.updated_at = now;
                        batch.put(rk, rule.encode());
                    }
                }
            }
            o.category = f.category;
            o.occurrences = f.counts.occurrences;
            o.opportunities = f.counts.opportunities;
            o.contradictions = f.counts.contradictions;
            o.consistency = f.consistency;
            o.counted = f.confidence;
            o.promotion_candidate = f.pattern.behaviour.actionable();
            o.support = f.support.clone();
            o.first_seen = o.first_seen.min(f.first_seen);
            o.last_seen = f.last_seen;
            o.updated_at = now;
            if o.phrased_by == "engine" {
                o.evidence = f.evidence();
            }
            self.phrase(&mut o);
            self.stage_collapse(&nsc, &o, now, &mut batch)?;
            batch.put(obs_key(&nsc, o.id), o.encode());
            if let Some(v) = &vector {
                let model = self.config.vector_model.clone();
                batch.put(
                    nsc.key(Table::ObservationVector, &o.id.to_be_bytes()),
                    encode_vector(&model, v),
                );
            }
            self.write_rules(&nsc, &batch)?;
            match target {
                Some(i) => {
                    r.updated.push(o.id);
                    existing[i] = o;
                }
                None => {
                    r.inserted.push(o.id);
                    next += 1;
                    existing.push(o);
                }
            }
        }
        // Open observations this run did not touch are recounted over the same window, so
        // nothing is promoted on counts that no longer hold.
        for o in existing.iter_mut() {
            // Lesson observations are counted over episodes by consolidation, not here.
            if o.status != ObservationStatus::Open
                || !o.episodes.is_empty()
                || r.updated.contains(&o.id)
                || r.inserted.contains(&o.id)
            {
                continue;
            }
            let Some(p) = Pattern::parse(&o.pattern) else { continue };
            let (counts, counted) =
                det.recount(&p).unwrap_or((Default::default(), Confidence::Low));
            let consistency = counts.occurrences as f32 / counts.opportunities.max(1) as f32;
            if o.counted == counted
                && o.occurrences == counts.occurrences
                && o.opportunities == counts.opportunities
            {
                continue;
            }
            o.occurrences = counts.occurrences;
            o.opportunities = counts.opportunities;
            o.contradictions = counts.contradictions;
            o.consistency = consistency;
            o.counted = counted;
            o.updated_at = now;
            let mut batch = Batch::new();
            self.stage_collapse(&nsc, o, now, &mut batch)?;
            batch.put(obs_key(&nsc, o.id), o.encode());
            self.write_rules(&nsc, &batch)?;
            r.updated.push(o.id);
        }
        Ok(r)
    }

    /// A promoted observation whose recount fell to low confidence was a fluke of early
    /// data: its active rule goes back to candidate (false positives are worse than false
    /// negatives).
    fn stage_collapse(
        &self,
        ns: &Namespace,
        o: &Observation,
        now: i64,
        batch: &mut Batch,
    ) -> Result<()> {
        let (Some(rule_id), Confidence::Low) = (o.rule, o.confidence()) else {
            return Ok(());
        };
        let key = ns.key(Table::Rule, &rule_id.to_be_bytes());
        if let Some(bytes) = self.store.get(&key)? {
            let mut rule = crate::record::Rule::decode(&bytes)?;
            if rule.status == crate::record::RuleStatus::Active {
                rule.status = crate::record::RuleStatus::Candidate;
                rule.updated_at = now;
                batch.put(key, rule.encode());
            }
        }
        Ok(())
    }

    /// The observation of the same agent and behaviour whose quote embeds within the
    /// duplicate cosine of `v` (open or rejected), if any.
    fn near_duplicate(
        &self,
        ns: &Namespace,
        existing: &[Observation],
        f: &Found,
        v: &[f32],
    ) -> Result<Option<usize>> {
        let want = (f.pattern.agent.clone(), f.pattern.behaviour.key());
        let mut best: Option<(usize, f32)> = None;
        for (i, o) in existing.iter().enumerate() {
            if o.status == ObservationStatus::Merged
                || behaviour_of(&o.pattern).as_ref() != Some(&want)
            {
                continue;
            }
            let c = match read_obs_vector(&self.store, ns, o.id)? {
                Some(ov) if ov.len() == v.len() => cosine(&ov, v),
                // A rejected observation's embedding is deleted: its behaviour alone blocks.
                None if o.status == ObservationStatus::Rejected => 1.0,
                _ => continue,
            };
            if c >= self.config.learning.duplicate_cosine && best.is_none_or(|(_, b)| c > b) {
                best = Some((i, c));
            }
        }
        Ok(best.map(|(i, _)| i))
    }

    /// Lets the host's model reword quote and evidence; keeps the engine's words unless the
    /// answer passes `learn::phrasing::check`.
    fn phrase(&mut self, o: &mut Observation) {
        let Some(llm) = self.llm.as_mut() else { return };
        if let Ok(answer) = llm.complete(&phrasing::prompt(o), 300) {
            if let Ok((quote, evidence)) = phrasing::check(&answer, o) {
                o.quote = quote;
                o.evidence = evidence;
                o.phrased_by = "llm".into();
            }
        }
    }

    /// Observations of `ns` with one of `statuses` (all when empty), by id.
    pub fn observations(
        &self,
        ns: &str,
        statuses: &[ObservationStatus],
    ) -> Result<Vec<Observation>> {
        let nsc = Namespace::new(ns)?;
        let mut all = load_observations(&self.store, &nsc)?;
        all.retain(|o| statuses.is_empty() || statuses.contains(&o.status));
        Ok(all)
    }

    /// One observation.
    pub fn observation(&self, ns: &str, id: u64) -> Result<Observation> {
        let nsc = Namespace::new(ns)?;
        let bytes = self
            .store
            .get(&obs_key(&nsc, id))?
            .ok_or_else(|| Error::NotFound(format!("observation {id} in namespace {ns}")))?;
        Observation::decode(&bytes)
    }

    /// Open observations ranked by cosine(query, quote) × exp(−λ·days since last recount);
    /// needs the embedder (or `vector`, the query's embedding).
    pub fn recall_observations(
        &mut self,
        ns: &str,
        text: &str,
        vector: Option<&[f32]>,
        k: usize,
        now: i64,
    ) -> Result<Vec<ObservationHit>> {
        let nsc = Namespace::new(ns)?;
        let q = self.vector_for(text, vector, Role::Query)?;
        let lambda = self.config.learning.observation_lambda;
        let mut hits = Vec::new();
        for o in load_observations(&self.store, &nsc)? {
            if o.status != ObservationStatus::Open {
                continue;
            }
            let Some(v) = read_obs_vector(&self.store, &nsc, o.id)? else { continue };
            if v.len() != q.len() {
                continue;
            }
            let c = cosine(&q, &v);
            let days = (now - o.updated_at).max(0) as f32 / DAY as f32;
            let recency = (-lambda * days).exp();
            hits.push(ObservationHit { observation: o, cosine: c, recency, score: c * recency });
        }
        hits.sort_by(|a, b| {
            b.score.total_cmp(&a.score).then(a.observation.id.cmp(&b.observation.id))
        });
        hits.truncate(k.min(1000));
        Ok(hits)
    }
}
