//! Property tests: top-k from the indexes against brute force over the same data.

mod common;

use common::hash_embed::{vector, HashEmbedder};
use mnemo::index::bm25::Bm25;
use mnemo::index::vectors::{VectorConfig, VectorIndex};
use mnemo::record::Episode;
use mnemo::store::MemoryStore;
use mnemo::{Config, Engine, Query};
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "deploy", "cache", "node", "invoice", "marco", "staging", "backup", "lockfile", "remix",
    "billing", "timeout", "retry",
];

fn text_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..6).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Delta-only and small sealed indexes are exact: top-k equals brute force (ids with the
    /// same cosine may swap, so scores are compared).
    #[test]
    fn vector_top_k_matches_brute_force(texts in prop::collection::vec(text_strategy(), 1..80), q in text_strategy(), seal in 8usize..64, k in 1usize..10) {
        let mut idx = VectorIndex::new(common::hash_embed::DIM, VectorConfig { seal_at: seal, ef_search: 128, ..VectorConfig::default() });
        for (i, t) in texts.iter().enumerate() {
            idx.insert(i as u64, &vector(t));
            if idx.needs_maintenance() { idx.maintain(false, u64::MAX); }
        }
        let qv = vector(&q);
        let got = idx.search(&qv, k, |id| id % 3 != 0);
        let want = idx.exact(&qv, k, |id| id % 3 != 0);
        prop_assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            prop_assert!((g.1 - w.1).abs() < 1e-5, "got {:?} want {:?}", got, want);
        }
    }

    /// BM25 top-k equals scoring every document one by one.
    #[test]
    fn bm25_top_k_matches_brute_force(texts in prop::collection::vec(text_strategy(), 1..60), q in text_strategy(), k in 1usize..10) {
        let mut idx = Bm25::default();
        for (i, t) in texts.iter().enumerate() { idx.insert(i as u64, t); }
        let got = idx.search(&q, k, |_| true);
        let mut all: Vec<(u64, f32)> = (0..texts.len() as u64).filter_map(|i| idx.explain(&q, i)).filter(|h| h.score > 0.0).map(|h| (h.id, h.score)).collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(k);
        prop_assert_eq!(got.iter().map(|h| h.id).collect::<Vec<_>>(), all.iter().map(|h| h.0).collect::<Vec<_>>());
    }

    /// Below the candidate limit every live episode is a candidate, so the engine's top-k is the
    /// brute-force top-k of its own explained scores, and never includes the future.
    #[test]
    fn engine_top_k_is_sorted_complete_and_causal(texts in prop::collection::vec(text_strategy(), 1..50), q in text_strategy(), k in 1usize..8) {
        let mut e = Engine::new(MemoryStore::new(), Config::default()).with_embedder(Box::new(HashEmbedder));
        for (i, t) in texts.iter().enumerate() {
            e.remember("p", Episode::new(t.clone(), i as i64 * 3_600_000), None).unwrap();
        }
        let now = (texts.len() as i64 / 2) * 3_600_000;
        let mut query = Query::new(q, 64);
        query.touch = false;
        let all = e.recall("p", &query, now).unwrap().hits;
        prop_assert!(all.iter().all(|h| h.episode.created_at <= now));
        prop_assert_eq!(all.len(), texts.len().min(texts.len() / 2 + 1));
        query.k = k;
        let top = e.recall("p", &query, now).unwrap().hits;
        let scores: Vec<f32> = top.iter().map(|h| h.explanation.final_score).collect();
        prop_assert!(scores.windows(2).all(|w| w[0] >= w[1]));
        let want: Vec<f32> = all.iter().take(k).map(|h| h.explanation.final_score).collect();
        prop_assert_eq!(scores, want);
    }
}
