//! Cold records in a recall that asks for them (`Query::include_cold`): episodes compaction
//! summarised and episodes consolidation evicted. They are not in the BM25 or vector indexes
//! (that is what keeps them from competing), so a full-history search scores them directly:
//! each cold episode's text against the query with the live index's BM25 statistics
//! (`Bm25::score_unindexed`, a long text by its best window), and its stored vectors by exact
//! cosine (a long text by its best passage). The cost grows with the
//! cold records — a full scan, paid only by the queries that ask for it.

use crate::embed::cosine;
use crate::engine::namespace::LoadedNamespace;
use crate::engine::retrieve::filter::Filter;
use crate::error::Result;
use crate::index::FastMap as HashMap;
use crate::store::{KvStore, Namespace};

/// What a cold candidate scored.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColdSignals {
    pub bm25: f32,
    pub cosine: f32,
    /// Summed IDF of the query terms it holds.
    pub matched: f32,
}

/// The cold episodes of `space` that best match (the `4k` best by BM25 and the `4k` best by
/// cosine, at least 64 each), with their signals.
pub(crate) fn cold_candidates(
    space: &mut LoadedNamespace,
    store: &impl KvStore,
    ns: &Namespace,
    qterms: &[String],
    qv: &[f32],
    filter: &Filter,
    k: usize,
) -> Result<HashMap<u64, ColdSignals>> {
    let n = k.saturating_mul(4).max(64);
    let ids: Vec<u64> = space
        .episodes
        .hots()
        .iter()
        .filter(|h| h.cold && filter.matches_hot(h))
        .map(|h| h.id)
        .collect();
    let idf: Vec<f32> = qterms.iter().map(|t| space.bm25.idf(t)).collect();
    let mut scored = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(e) = space.episodes.get(id)? else { continue };
        if !filter.matches(&e) {
            continue;
        }
        // Scored as the indexes would score it hot: BM25 by its best window, the cosine by
        // its best passage.
        let (bm25, found) = crate::engine::namespace::bm25_documents(&e)
            .iter()
            .map(|(_, text)| space.bm25.score_unindexed(qterms, text))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or_default();
        let matched = found.iter().zip(&idf).filter(|(f, _)| **f).map(|(_, w)| w).sum();
        drop(e);
        let cosine = match space.vectors_of(store, ns, id)? {
            Some(v) if v.whole.len() == qv.len() => std::iter::once(&v.whole)
                .chain(v.passages.iter().map(|p| &p.vector))
                .map(|x| cosine(x, qv))
                .fold(f32::MIN, f32::max),
            _ => 0.0,
        };
        scored.push((id, ColdSignals { bm25, cosine, matched }));
    }
    let mut out = HashMap::default();
    scored.sort_by(|a, b| b.1.bm25.total_cmp(&a.1.bm25).then(a.0.cmp(&b.0)));
    out.extend(scored.iter().take(n).filter(|s| s.1.bm25 > 0.0).copied());
    scored.sort_by(|a, b| b.1.cosine.total_cmp(&a.1.cosine).then(a.0.cmp(&b.0)));
    out.extend(scored.iter().take(n).copied());
    Ok(out)
}
