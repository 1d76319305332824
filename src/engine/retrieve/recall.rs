//! Recall: candidates (BM25 ∪ vectors ∪ the recent window, under filters) → rescoring → top k.

use crate::index::FastMap as HashMap;

use crate::embed::Role;
use crate::engine::episodes::Hot;
use crate::engine::namespace::LoadedNamespace;
use crate::engine::retrieve::filter::Filter;
use crate::engine::retrieve::score::{Explanation, MatchedPassage, Scoring, Signals};
use crate::engine::{Engine, Loaded};
use crate::error::{Error, Result};
use crate::index::vectors::VectorIndex;
use crate::record::Episode;
use crate::store::{Batch, KvStore, Namespace, Table};
use crate::time::{parse_query_time, TimeExpr, TimeRef, Window, DAY};

/// A recall request.
#[derive(Debug, Clone)]
pub struct Query {
    /// What is asked.
    pub text: String,
    /// How many hits at most.
    pub k: usize,
    /// Filters.
    pub filter: Filter,
    /// The query's vector, when the host embeds; otherwise the engine's embedder makes it.
    pub vector: Option<Vec<f32>>,
    /// Read time expressions in the text ("last week") as a window.
    pub time_expressions: bool,
    /// Update last access and count of the hits returned (one batch).
    pub touch: bool,
    /// Scoring for this query (the engine's default when `None`).
    pub scoring: Option<Scoring>,
    /// Also search cold records: episodes compaction summarised and consolidation evicted
    /// ("full history search"). Without it a summary stands for its sources (its `evidence`
    /// lists them).
    pub include_cold: bool,
}

impl Query {
    /// A query for the `k` best hits with default settings.
    pub fn new(text: impl Into<String>, k: usize) -> Self {
        Self {
            text: text.into(),
            k,
            filter: Filter::default(),
            vector: None,
            time_expressions: true,
            touch: true,
            scoring: None,
            include_cold: false,
        }
    }
}

/// One recalled episode.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The episode (as it was before this recall touched it).
    pub episode: Episode,
    /// How its score came about.
    pub explanation: Explanation,
}

/// The answer to a recall.
#[derive(Debug, Clone)]
pub struct Recall {
    /// Hits, best first.
    pub hits: Vec<Hit>,
    /// The time expression found in the query, if any.
    pub time: Option<TimeExpr>,
    /// The window applied as a filter (from the filter or the query text).
    pub window: Option<Window>,
    /// True when the query's window held no candidate and was dropped.
    pub window_dropped: bool,
    /// The id of this recall in the retrieval log, to report its outcome with
    /// [`Engine::outcome`] (`None` for a read-only recall: `touch` false, or no hits).
    pub retrieval_id: Option<u64>,
}

/// Candidates each retriever proposes per hit asked for.
const FANOUT: usize = 4;
const MIN_CANDIDATES: usize = 64;
/// Most recent episodes always considered.
const RECENT: usize = 32;
/// Best candidates compared pairwise for shadowing.
const SHADOW_POOL: usize = 48;
/// Filtered sets at most this large are scored exactly instead of through the graph.
const EXACT_FILTERED: usize = 4096;

impl<S: KvStore> Engine<S> {
    /// Recalls the episodes of `ns` that best answer `query` at time `now` (ms). Episodes
    /// created after `now` are never returned.
    pub fn recall(&mut self, ns: &str, query: &Query, now: i64) -> Result<Recall> {
        let ns = Namespace::new(ns)?;
        if query.text.trim().is_empty() && query.vector.is_none() {
            return Err(Error::InvalidInput("query text is empty: say what to recall".into()));
        }
        if !self.space(&ns)?.exists {
            return Err(Error::UnknownNamespace(ns.as_str().to_string()));
        }
        let time = if query.time_expressions { parse_query_time(&query.text, now) } else { None };
        let text = match &time {
            Some(t) if !t.rest.trim().is_empty() => t.rest.clone(),
            _ => query.text.clone(),
        };
        let qv = self.vector_for(&text, query.vector.as_deref(), Role::Query)?;
        let model = self.config.vector_model.clone();
        let scoring = query.scoring.clone().unwrap_or_else(|| self.config.scoring.clone());
        let space = self.space(&ns)?;
        space.check_model(&model)?;
        let mut filter = query.filter.clone();
        let mut window = filter.window;
        if let Some(t) = &time {
            let w = match &t.reference {
                TimeRef::Window(w) => Some(*w),
                TimeRef::Anchor { event, before } => anchor_window(space, event, *before, now),
            };
            window = intersect(window, w);
        }
        let bound = Window { from: i64::MIN, to: now.saturating_add(1) };
        filter.window = intersect(window, Some(bound));
        let gap = context_gap(&scoring);
        let mut qterms = query_terms(&scoring, &text);
        let Loaded { space, store, .. } = self.loaded(&ns)?;
        let cold = if query.include_cold {
            crate::engine::retrieve::cold::cold_candidates(
                space, &*store, &ns, &qterms, &qv, &filter, query.k,
            )?
        } else {
            Default::default()
        };
        let space = self.space(&ns)?;
        let mut cands = candidates(space, &qterms, &qv, &filter, query.k, gap, now);
        let mut window_dropped = false;
        if cands.is_empty() && cold.is_empty() && window != query.filter.window {
            // The time expression matched nothing: BM25 reads the query whole, the words of a
            // relative phrase included (the vector stays the one made without them).
            filter.window = intersect(query.filter.window, Some(bound));
            if text != query.text {
                qterms = query_terms(&scoring, &query.text);
            }
            cands = candidates(space, &qterms, &qv, &filter, query.k, gap, now);
            window_dropped = true;
        }
        // A query that names its time ("in March", "last week") is answered inside that window:
        // there, how old a memory is says nothing about whether it is the one asked for.
        let mut scoring = scoring;
        if scoring.formula == crate::engine::retrieve::score::Formula::Balanced {
            if time.is_some() && !window_dropped {
                scoring.recency_floor = 1.0;
            } else if crate::engine::retrieve::score::asks_about_the_past(&text) {
                // "When did…", "what was…": about what happened, not about what holds now.
                scoring.recency_floor = scoring.recency_floor.max(scoring.past_recency_floor);
            }
        }
        for id in cold.keys() {
            cands.entry(*id).or_default().sources.push("cold");
        }
        let mut hits = rescore(space, &scoring, &qterms, &qv, cands, &cold, now, query.k, gap)?;
        self.passage_spans(&ns, &mut hits)?;
        let window = filter.window.filter(|w| *w != bound);
        let retrieval_id = if query.touch {
            let used: Vec<&Episode> = hits.iter().map(|h| &h.episode).collect();
            self.record_use(&ns, &used, now)?
        } else {
            None
        };
        Ok(Recall { hits, time, window, window_dropped, retrieval_id })
    }
}

impl<S: KvStore> Engine<S> {
    /// Fills in where in its text each hit's matched passage lies (read from its vector
    /// record: the index holds passages' vectors, not their windows).
    fn passage_spans(&mut self, ns: &Namespace, hits: &mut [Hit]) -> Result<()> {
        for h in hits.iter_mut() {
            let Some(m) = h.explanation.passage.as_mut() else { continue };
            let Loaded { space, store, .. } = self.loaded(ns)?;
            let window = space
                .vectors_of(&*store, ns, h.episode.id)?
                .and_then(|v| v.passages.get(m.index as usize).map(|p| (p.start, p.end)))
                .filter(|&(a, b)| a < b && h.episode.text.get(a as usize..b as usize).is_some());
            match window {
                Some((start, end)) => (m.start, m.end) = (start, end),
                // Rewritten since it was indexed, or a window that is not of this text (a
                // damaged record): say nothing rather than point at the wrong words.
                None => h.explanation.passage = None,
            }
        }
        Ok(())
    }
}

/// The terms BM25 scores for `text` under `scoring` (function words and stems as it says).
fn query_terms(scoring: &Scoring, text: &str) -> Vec<String> {
    let mut terms = if scoring.skip_function_words {
        crate::index::bm25::query_terms(text)
    } else {
        crate::index::bm25::all_query_terms(text)
    };
    if !scoring.stems {
        terms.retain(|t| !crate::index::bm25::is_stem(t));
    }
    terms
}

fn intersect(a: Option<Window>, b: Option<Window>) -> Option<Window> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Window { from: a.from.max(b.from), to: a.to.min(b.to) }),
        (a, b) => a.or(b),
    }
}

/// "before the migration": the window ends (or starts) at the best lexical match of the event.
fn anchor_window(space: &LoadedNamespace, event: &str, before: bool, now: i64) -> Option<Window> {
    let terms = crate::index::bm25::query_terms(event);
    let hit = space
        .bm25_search(&terms, 1, |id| space.episodes.hot(id).is_some_and(|e| e.created_at <= now));
    let at = space.episodes.hot(*hit.first()?)?.created_at;
    Some(if before {
        Window { from: i64::MIN, to: at }
    } else {
        Window { from: at + 1, to: now.saturating_add(1) }
    })
}

/// How far apart (ms) two episodes may be and still be neighbours, when the formula uses the
/// conversation around a candidate.
fn context_gap(scoring: &Scoring) -> Option<i64> {
    let on = scoring.formula == crate::engine::retrieve::score::Formula::Balanced
        && scoring.context_weight > 0.0;
    on.then_some(scoring.context_gap_ms.max(0))
}

/// The episodes just before and after `h` in time, when created within `gap` ms of it.
fn neighbours(space: &LoadedNamespace, h: &Hot, gap: i64) -> [Option<u64>; 2] {
    [neighbour(space, h, gap, Side::Before), neighbour(space, h, gap, Side::After)]
}

#[derive(Clone, Copy)]
enum Side {
    Before = 0,
    After = 1,
}

/// The first conversation turn on `side` of `h` in (time, id) order, created within `gap` ms
/// of it. Turns between them that are not conversation turns (summaries) are passed over.
///
/// The relation is symmetric: when B is the turn after A, A is the turn before B (the
/// summaries between them are within `gap` of both), which saves looking up one side of a
/// neighbour that joined a recall as another candidate's context.
fn neighbour(space: &LoadedNamespace, h: &Hot, gap: i64, side: Side) -> Option<u64> {
    use std::ops::Bound::{Excluded, Unbounded};
    // Summaries are not turns of a conversation: they have no neighbours and are none.
    if h.tier > 0 {
        return None;
    }
    let key = (h.created_at, h.id);
    let near = |&&(t, _): &&(i64, u64)| (t - h.created_at).abs() <= gap;
    let raw = |&&(_, id): &&(i64, u64)| space.episodes.hot(id).is_some_and(|x| x.tier == 0);
    match side {
        Side::Before => {
            space.by_time.range((Unbounded, Excluded(key))).rev().take_while(near).find(raw)
        }
        Side::After => space.by_time.range((Excluded(key), Unbounded)).take_while(near).find(raw),
    }
    .map(|p| p.1)
}

/// One candidate of a recall: which retrievers proposed it, and its neighbours in time as far
/// as they are known while gathering candidates (`None`: not looked up; `Some(None)`: none).
#[derive(Default)]
struct Candidate {
    sources: Vec<&'static str>,
    near: [Option<Option<u64>>; 2],
}

fn candidates(
    space: &LoadedNamespace,
    qterms: &[String],
    qv: &[f32],
    filter: &Filter,
    k: usize,
    context_gap: Option<i64>,
    now: i64,
) -> HashMap<u64, Candidate> {
    let n = k.saturating_mul(FANOUT).max(MIN_CANDIDATES);
    let whole = filter.needs_episode();
    let keep = |id: u64| {
        space.episodes.hot(id).is_some_and(|h| h.recallable(now) && filter.matches_hot(h))
            && (!whole || matches!(space.episodes.get(id), Ok(Some(e)) if filter.matches(&e)))
    };
    let mut out: HashMap<u64, Candidate> = HashMap::default();
    for id in space.bm25_search(qterms, n, keep) {
        out.entry(id).or_default().sources.push("bm25");
    }
    // A narrow window is scored exactly over its own episodes; otherwise through the index.
    // A window that ends before it starts (a filter and a time expression that do not meet)
    // holds nothing: it is made empty, since an inverted range would panic.
    let mut w = filter.window.unwrap_or(Window { from: i64::MIN, to: i64::MAX });
    w.to = w.to.max(w.from);
    let covers_all = |(first, last): (i64, i64)| w.from <= first && last < w.to;
    let span = space.by_time.first().zip(space.by_time.last()).map(|(a, b)| (a.0, b.0));
    let in_window = if span.is_none_or(covers_all) {
        space.by_time.len()
    } else {
        space.by_time.range((w.from, 0)..(w.to, 0)).take(EXACT_FILTERED + 1).count()
    };
    let vector_hits = if in_window <= EXACT_FILTERED {
        let mut hits: Vec<(u64, f32)> = space
            .by_time
            .range((w.from, 0)..(w.to, 0))
            .filter(|(_, id)| keep(*id))
            .filter_map(|(_, id)| Some((*id, space.cosine(*id, qv)?.0)))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(n);
        hits
    } else {
        space.vector_search(qv, n, keep)
    };
    for (id, _) in vector_hits {
        out.entry(id).or_default().sources.push("vector");
    }
    let recent = space.by_time.range(..(w.to, 0)).rev().filter(|(_, id)| keep(*id)).take(RECENT);
    for (_, id) in recent {
        out.entry(*id).or_default().sources.push("recent");
    }
    // The turns around each candidate join, so its context can be scored (and so can they).
    if let Some(gap) = context_gap {
        let found: Vec<u64> = out.keys().copied().collect();
        for id in found {
            let Some(h) = space.episodes.hot(id) else { continue };
            let near = neighbours(space, h, gap);
            for (side, n) in [(Side::After, near[0]), (Side::Before, near[1])] {
                // `n` is before `id`, so `id` is after `n` (and the other way round).
                let Some(n) = n else { continue };
                if !out.contains_key(&n) && keep(n) {
                    out.insert(n, Candidate { sources: vec!["context"], near: [None, None] });
                }
                if let Some(c) = out.get_mut(&n).filter(|c| c.sources == ["context"]) {
                    c.near[side as usize] = Some(Some(id));
                }
            }
            if let Some(c) = out.get_mut(&id) {
                c.near = near.map(Some);
            }
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn rescore(
    space: &LoadedNamespace,
    scoring: &Scoring,
    qterms: &[String],
    qv: &[f32],
    cands: HashMap<u64, Candidate>,
    cold: &HashMap<u64, crate::engine::retrieve::cold::ColdSignals>,
    now: i64,
    k: usize,
    context_gap: Option<i64>,
) -> Result<Vec<Hit>> {
    let idf: Vec<f32> = qterms.iter().map(|t| space.bm25.idf(t)).collect();
    let mass: f32 = idf.iter().sum();
    // Every candidate is scored against every query term: the lists are decoded once.
    let decoded = space.bm25.decoded_lists(qterms);
    let lists: Vec<Option<&Vec<(u64, u32)>>> = decoded.iter().map(Option::as_ref).collect();
    let mut held = vec![false; qterms.len()];
    let mut near: HashMap<u64, [Option<Option<u64>>; 2]> = HashMap::default();
    let mut rows: Vec<(&Hot, Vec<&'static str>, Signals, Option<usize>)> = cands
        .into_iter()
        .filter_map(|(id, c)| {
            let e = space.episodes.hot(id)?;
            near.insert(id, c.near);
            let mut passage = None;
            let (bm25, cosine, matched) = match cold.get(&id) {
                Some(c) => (c.bm25, c.cosine, c.matched),
                None => {
                    // A long text is scored by its best window; its coverage is that window's.
                    let bm25 = space.bm25_best_lists(&lists, id, &mut held).map_or(0.0, |b| b.1);
                    let matched = held.iter().zip(&idf).filter(|(h, _)| **h).map(|(_, w)| w).sum();
                    let cosine = space.cosine(id, qv).map_or(0.0, |(c, p)| {
                        passage = p;
                        c
                    });
                    (bm25, cosine, matched)
                }
            };
            let signals = Signals {
                bm25,
                cosine,
                age_days: (now - e.last_accessed_at).max(0) as f32 / DAY as f32,
                tier: e.tier,
                importance: e.importance,
                access_count: e.access_count,
                coverage: if mass > 0.0 { matched / mass } else { 0.0 },
                neighbours: [None, None],
            };
            Some((e, c.sources, signals, passage))
        })
        .collect();
    sort_moving_once(&mut rows, |a, b| a.0.id.cmp(&b.0.id));
    if let Some(gap) = context_gap {
        let row_of: HashMap<u64, u32> =
            rows.iter().enumerate().map(|(i, r)| (r.0.id, i as u32)).collect();
        for r in rows.iter_mut() {
            let known = near.get(&r.0.id).copied().unwrap_or_default();
            let [before, after] = [Side::Before, Side::After].map(|side| {
                known[side as usize].unwrap_or_else(|| neighbour(space, r.0, gap, side))
            });
            r.2.neighbours = [
                before.and_then(|n| row_of.get(&n).copied()),
                after.and_then(|n| row_of.get(&n).copied()),
            ];
        }
    }
    let signals: Vec<Signals> = rows.iter().map(|r| r.2.clone()).collect();
    let coverage: HashMap<u64, f32> = rows.iter().map(|r| (r.0.id, r.2.coverage)).collect();
    let mut scored: Vec<(&Hot, Explanation)> = scoring
        .explain(&signals)
        .into_iter()
        .zip(rows)
        .map(|(mut explanation, (e, sources, _, passage))| {
            explanation.sources = sources;
            explanation.passage =
                passage.map(|p| MatchedPassage { index: p as u32, start: 0, end: 0 });
            if let Some(w) = space.outcome_weights.get(&e.id) {
                explanation.outcome_weight = *w;
                explanation.final_score *= *w;
            }
            (e, explanation)
        })
        .collect();
    let order = |a: &(&Hot, Explanation), b: &(&Hot, Explanation)| {
        b.1.final_score
            .total_cmp(&a.1.final_score)
            .then(b.0.created_at.cmp(&a.0.created_at))
            .then(a.0.id.cmp(&b.0.id))
    };
    sort_moving_once(&mut scored, order);
    use crate::engine::retrieve::score::Formula;
    if scoring.shadow_cosine < 1.0
        && matches!(scoring.formula, Formula::Balanced | Formula::Weighted)
    {
        shadow(space, scoring, &coverage, &mut scored);
        sort_moving_once(&mut scored, order);
    }
    scored.truncate(k);
    scored
        .into_iter()
        .map(|(e, mut explanation)| {
            let key = space.bm25_best(qterms, e.id).map_or(e.id, |b| b.0);
            if let Some(h) = space.bm25.explain_terms(qterms, key) {
                explanation.terms = h.terms.into_iter().map(|t| (t.term, t.score)).collect();
            }
            let episode = space.episodes.get(e.id)?.expect("candidates are episodes").into_owned();
            explanation.origin = crate::record::Origin::of_episode_source(&episode.source);
            explanation.untrusted = !explanation.origin.trusted();
            explanation.instruction_like =
                episode.tags.iter().any(|t| t == crate::trust::instructions::TAG);
            Ok(Hit { episode, explanation })
        })
        .collect()
}

/// Sorts `v` into the order a stable `sort_by(cmp)` gives, moving each element once: the
/// rows sorted here are large (an explanation each), and a stable sort of them spent more time
/// copying elements than comparing.
fn sort_moving_once<T>(v: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> std::cmp::Ordering) {
    let mut order: Vec<u32> = (0..v.len() as u32).collect();
    order.sort_by(|&a, &b| cmp(&v[a as usize], &v[b as usize]));
    let mut slots: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    // `order` is a permutation of the slots: each is taken once.
    *v = order.into_iter().filter_map(|i| slots[i as usize].take()).collect();
}

impl<S: KvStore> Engine<S> {
    /// Records that `used` were put in front of the model at `now`: their last access and
    /// count are raised, and the retrieval log gets one small record (the episodes and the
    /// active rules) whose id outcome tracking takes ([`Engine::outcome`]). That record is
    /// all a recall writes: the episodes' stored records catch up later (`engine::persist::usage`).
    /// One batch; `None` when nothing was used.
    pub(crate) fn record_use(
        &mut self,
        ns: &Namespace,
        used: &[&Episode],
        now: i64,
    ) -> Result<Option<u64>> {
        if used.is_empty() {
            return Ok(None);
        }
        let rules = self.active_rule_ids(ns)?;
        self.space(ns)?;
        let episodes: Vec<u64> = used.iter().map(|e| e.id).collect();
        let (id, record) = crate::engine::learning::outcomes::log_retrieval(
            &self.store,
            ns,
            now,
            episodes.clone(),
            rules,
        )?;
        let mut batch = Batch::new();
        batch.put(ns.key(Table::Retrieval, &id.to_be_bytes()), record);
        let space = self.space(ns)?;
        let staged = space.stage_use(ns, (id, now), &episodes, &mut batch)?;
        self.store.write(&batch)?;
        let space = self.space(ns)?;
        space.commit_use(staged);
        Ok(Some(id))
    }
}

/// Query-time supersession: among the best candidates (sorted best first), one that a newer,
/// at least as important and similarly relevant candidate repeats (episode cosine ≥
/// `shadow_cosine`) and that holds at least the same query terms (by IDF mass) is likely stale
/// (Node 18 after the move to Node 22) and is penalised. The newer one must come from a later
/// conversation (more than `context_gap_ms` after it): a reply that echoes the turn before it
/// ("Let's make our collaboration awesome" — "I'm pumped to collaborate") restates nothing
/// that changed. Only
/// the top [`SHADOW_POOL`] are compared, so the pairwise cost stays bounded (and independent
/// of `k`, so asking for fewer hits never changes the scores of those returned).
fn shadow(
    space: &LoadedNamespace,
    scoring: &Scoring,
    coverage: &HashMap<u64, f32>,
    hits: &mut [(&Hot, Explanation)],
) {
    let m = hits.len().min(SHADOW_POOL);
    // The share of the query's IDF mass each holds (as scored): one that names what the newer
    // one does not (an invoice number in an old summary) answers something the newer cannot.
    let matched: Vec<f32> =
        hits[..m].iter().map(|(h, _)| coverage.get(&h.id).copied().unwrap_or(0.0)).collect();
    let rows: Vec<_> = hits[..m].iter().map(|(h, _)| space.vectors.row_of(h.id)).collect();
    let mut penalised = Vec::new();
    for i in 0..m {
        let (a, ax) = &hits[i];
        let newer = (0..m).find(|&j| {
            let (b, bx) = &hits[j];
            j != i
                && b.created_at > a.created_at.saturating_add(scoring.context_gap_ms.max(0))
                && matched[j] >= matched[i]
                && b.importance >= a.importance
                && bx.relevance >= 0.8 * ax.relevance
                && rows[i]
                    .zip(rows[j])
                    .is_some_and(|(x, y)| VectorIndex::pair_rows(x, y) >= scoring.shadow_cosine)
        });
        if let Some(j) = newer {
            penalised.push((i, hits[j].0.id));
        }
    }
    for (i, by) in penalised {
        let x = &mut hits[i].1;
        x.shadowed_by = Some(by);
        x.final_score *= scoring.shadow_penalty;
    }
}
