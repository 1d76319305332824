//! Upgrades: a store written by mnemo as of commit 99df7d9 — before fact origins, signals,
//! observations, erasure and quarantine existed — opens with today's build and answers as that
//! build did (tests/fixtures/upgrade-99df7d9, written by `tools/upgrade-fixture` with the old
//! binary: the store, the answers to the bench queries replayed in order, and its fact list).
//! Every later change to a stored format must keep this test passing, or migrate.

mod common;

use mnemo::record::{Origin, Source};
use mnemo::store::file::FileStore;
use mnemo::time::parse_iso8601;
use mnemo::{Config, Engine, Query};
use mnemo_embed::{BertConfig, BertEmbedder};

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
    }
}

#[test]
fn a_store_written_at_99df7d9_opens_and_answers_the_same() {
    let fixture = std::path::Path::new("tests/fixtures/upgrade-99df7d9");
    let dir = std::env::temp_dir().join(format!("mnemo-upgrade-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&fixture.join("store"), &dir);
    let model =
        BertEmbedder::from_dir(&common::model_dir(), BertConfig::e5("multilingual-e5-small-latin"))
            .unwrap();
    let mut e = Engine::new(FileStore::open(&dir).unwrap(), Config::default())
        .with_embedder(Box::new(model));
    let now = parse_iso8601("2024-12-31T00:00:00Z").unwrap();
    assert!(e.quarantined("team").unwrap().is_empty(), "every old record reads");
    let queries = std::fs::read_to_string("tests/fixtures/bench-queries.jsonl").unwrap();
    let answers = std::fs::read_to_string(fixture.join("answers.jsonl")).unwrap();
    let answers: Vec<serde_json::Value> =
        answers.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let queries: Vec<String> = queries
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().into()
        })
        .collect();
    // That build printed one JSON line per hit, five per query.
    assert_eq!(answers.len(), 5 * queries.len());
    for (q, old_hits) in queries.iter().zip(answers.chunks(5)) {
        // That build's scoring: the records read the same, so the answers are the same.
        let mut query = Query::new(q.as_str(), 5);
        query.scoring = Some(mnemo::engine::Scoring::legacy());
        let new = e.recall("team", &query, now).unwrap();
        assert_eq!(new.hits.len(), old_hits.len(), "{q}");
        for (n, o) in new.hits.iter().zip(old_hits) {
            assert_eq!(n.episode.id, o["id"].as_u64().unwrap(), "{q}");
            assert_eq!(n.episode.text, o["text"].as_str().unwrap(), "{q}");
            let (a, b) =
                (n.explanation.final_score, o["explanation"]["finalScore"].as_f64().unwrap());
            assert!((f64::from(a) - b).abs() < 1e-4, "{q}: score {a} then {b}");
        }
    }
    // Facts written before origins existed read with the origin their source implies.
    let facts = e.facts("team", now, &[], true).unwrap();
    let get = |k: &str| facts.iter().find(|f| f.key == k).unwrap();
    assert_eq!(
        (get("language").value.as_str(), get("language").source),
        ("Italian", Source::Explicit)
    );
    assert_eq!(get("language").origin, Origin::User);
    assert_eq!(get("billing.currency").origin, Origin::Admin);
    assert_eq!(get("tone").origin, Origin::Agent);
    let old_facts = std::fs::read_to_string(fixture.join("facts.txt")).unwrap();
    for f in &facts {
        assert!(old_facts.contains(&format!("{} = {}", f.key, f.value)), "{}: {old_facts}", f.key);
    }
    // And today's writes go on top of the old records.
    e.write_fact("team", &mnemo::engine::FactInput::new("new.key", "v"), now).unwrap();
    assert!(e.rules("team", &[]).unwrap().iter().any(|r| r.text.contains("lockfile")));
    // A store written before compaction existed compacts like any other.
    let before = e.stats("team", now).unwrap();
    let night = e.nightly("team", now, None).unwrap();
    assert!(night.done && !night.compacted.is_empty(), "{night:?}");
    let after = e.stats("team", now).unwrap();
    assert!(after.tiers.weekly > 0 && after.cold > 0, "{after:?}");
    assert!(after.retrievable < before.retrievable, "{before:?} → {after:?}");
    let c = &night.compacted[0];
    let source = e.episode("team", c.sources[0]).unwrap();
    assert_eq!(source.group, c.summary, "the old record is kept, superseded, in its group");
    let summary = e.episode("team", c.summary).unwrap();
    let mut q = Query::new(summary.text.lines().next().unwrap_or("x"), 5);
    q.include_cold = true;
    assert!(!e.recall("team", &q, now).unwrap().hits.is_empty());
}
