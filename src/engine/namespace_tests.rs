//! Tests of a loaded namespace through the engine: BM25 windows of long texts, rebuilds,
//! quarantine.

use super::namespace::*;
use super::Config;
use crate::engine::{Engine, Erasure};
use crate::record::Episode;
use crate::record::Status;
use crate::store::MemoryStore;

#[test]
fn a_long_text_is_in_bm25_as_windows_and_leaves_it_whole() {
    let config = Config { vector_model: "host@1".into(), dim: 2, ..Config::default() };
    let mut e = Engine::new(MemoryStore::new(), config);
    let long: String = (0..300).map(|i| format!("word{i} ")).collect::<String>() + "needle.";
    let windows = bm25_windows(&long).len();
    let docs = |e: &mut Engine<MemoryStore>| e.namespaces.get("u").map_or(0, |s| s.bm25.len());
    let stored = |e: &mut Engine<MemoryStore>, text: &str| match e
        .remember("u", Episode::new(text, 1_000), Some(&[0.6, 0.8]))
        .unwrap()
    {
        crate::engine::Remembered::Stored { id, .. } => id,
        other => panic!("{other:?}"),
    };
    let short = stored(&mut e, "a short memory");
    let id = stored(&mut e, &long);
    assert!(windows >= 3, "{windows}");
    assert_eq!(docs(&mut e), 1 + windows);
    let space = e.namespaces.get("u").unwrap();
    assert!(!space.bm25.has(id) && space.bm25.has(short));
    let needle = vec!["needle".to_string()];
    let (key, score) = space.bm25_best(&needle, id).unwrap();
    assert_eq!(key, passage_key(id, windows - 1));
    assert!(score > 0.0);
    assert_eq!(space.bm25_search(&needle, 5, |_| true), [id]);
    // Rejected: out of BM25, every window; back to raw: in again; erased: gone.
    e.set_status("u", id, Status::Rejected).unwrap();
    assert_eq!(docs(&mut e), 1);
    e.set_status("u", id, Status::Raw).unwrap();
    assert_eq!(docs(&mut e), 1 + windows);
    e.erase("u", &Erasure::Episode(id), 2_000).unwrap();
    e.load("u").unwrap();
    assert_eq!(docs(&mut e), 1);
}
