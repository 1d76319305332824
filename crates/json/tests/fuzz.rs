//! The JSON entry points under the mutation fuzzer (`mnemo::testing::fuzz`): no input may
//! panic; each is answered or refused with a typed error.

use std::cell::RefCell;

use mnemo::store::MemoryStore;
use mnemo::testing::fuzz;
use mnemo::{Config, Engine};
use mnemo_json::Json;

#[test]
fn json_inputs() {
    let seeds: Vec<Vec<u8>> = [
        r#"{"text":"npm install failed","outcome":"failure","verdict":"stale lockfile","entities":["npm"],"createdAt":1700000000000,"tags":["ci"],"source":"tool:npm","tier":1}"#,
        r#"{"text":"lockfile last week","k":5,"filter":{"tags":["ci"],"outcomes":["failure"],"from":0,"to":9},"touch":false}"#,
        r#"{"key":"language","value":"Italian","source":"explicit","origin":"user","confidence":0.9,"policy":"sensitive","ttlMs":1000}"#,
        r#"{"ts":"2024-03-04T09:00:00+01:00","kind":"edited","agent":"email","situation":{"contact":"Marco"},"before":"a; b","after":"a, b"}"#,
        r#"{"scope":"subject","subject":"Marco"}"#,
        r#"{"task":"reply to Marco","budget":{"episodes":200},"conversation":[{"role":"user","text":"hi"}]}"#,
        r#"{"text":"corrected","verdict":"right","vector":[0.6,0.8]}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let engine =
        RefCell::new(Engine::new(MemoryStore::new(), Config { dim: 2, ..Config::default() }));
    fuzz("json", seeds, |b| {
        let Ok(s) = std::str::from_utf8(b) else { return };
        let mut e = engine.borrow_mut();
        let mut f = Json(&mut *e);
        let _ = f.remember("ana", s, Some(&[0.6, 0.8]));
        let _ = f.recall("ana", s, 1_700_000_000_000, Some(vec![0.6, 0.8]));
        let _ = f.set_fact("ana", s, 1_700_000_000_000);
        let _ = f.signals("ana", s);
        let _ = f.request_erasure("ana", s, 1);
        let _ = f.context("ana", s, 1_700_000_000_000);
        let _ = f.correct("ana", 1, s, 1_700_000_000_000);
    });
}
