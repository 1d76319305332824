//! The engine through its public API, on the in-memory and file backends, with a deterministic
//! bag-of-words embedder (the real model is exercised by tests/quality.rs).

mod common;

use common::hash_embed::{vector, HashEmbedder, DIM};
use mnemo::engine::{FactWrite, Filter};
use mnemo::record::{Episode, Origin, Outcome, Policy, RuleStatus, Source, Status};
use mnemo::store::file::FileStore;
use mnemo::store::{KvStore, MemoryStore};
use mnemo::time::{parse_iso8601, DAY};
use mnemo::{Config, Engine, Query, Remembered};

fn at(s: &str) -> i64 {
    parse_iso8601(s).unwrap()
}

fn engine<S: KvStore>(store: S) -> Engine<S> {
    Engine::new(store, Config::default()).with_embedder(Box::new(HashEmbedder))
}

fn remember<S: KvStore>(e: &mut Engine<S>, text: &str, ts: &str) -> u64 {
    match e.remember("ana", Episode::new(text, at(ts)), None).unwrap() {
        Remembered::Stored { id, .. } => id,
        d => panic!("{d:?}"),
    }
}

fn snapshot(s: &MemoryStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    s.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[test]
fn remembered_episodes_come_back_explained_and_survive_reopening() {
    let dir = tempdir("reopen");
    let mut e = engine(FileStore::open(&dir).unwrap());
    remember(&mut e, "Invoice INV-2024-0042 for 1,250 EUR sent to Marco", "2024-03-05");
    remember(&mut e, "Deploy of web-app failed: stale lockfile in the cache", "2024-11-18");
    remember(&mut e, "Lunch order placed for the team", "2024-11-19");
    let now = at("2024-11-20");
    let r = e.recall("ana", &Query::new("INV-2024-0042", 2), now).unwrap();
    let top = &r.hits[0];
    assert!(top.episode.text.contains("INV-2024-0042"));
    let x = &top.explanation;
    assert!(x.bm25 > 0.0 && x.sources.contains(&"bm25"));
    assert!(x.terms.iter().any(|(t, _)| t == "inv-2024-0042"));
    assert!((x.final_score - x.relevance * x.recency * x.importance).abs() < 1e-6);
    assert_eq!(top.episode.access_count, 0, "hits show the episode as it was");
    drop(e);
    let mut e = engine(FileStore::open(&dir).unwrap());
    assert_eq!(e.load("ana").unwrap(), 3);
    let r = e.recall("ana", &Query::new("INV-2024-0042", 1), now).unwrap();
    assert_eq!(r.hits[0].episode.access_count, 1, "the first recall's touch was stored");
    assert_eq!(r.hits[0].episode.last_accessed_at, now);
}

#[test]
fn queries_never_see_the_future_and_read_time_expressions() {
    let mut e = engine(MemoryStore::new());
    let old = remember(&mut e, "decided to keep Postgres for billing", "2024-11-12");
    let new = remember(&mut e, "decided to move billing to SQLite", "2024-11-19");
    let r = e
        .recall("ana", &Query::new("what did we decide about billing", 5), at("2024-11-15"))
        .unwrap();
    assert_eq!(r.hits.iter().map(|h| h.episode.id).collect::<Vec<_>>(), vec![old]);
    let now = at("2024-11-20T12:00:00Z");
    let r =
        e.recall("ana", &Query::new("what did we decide last week about billing", 5), now).unwrap();
    assert_eq!(r.hits.len(), 1);
    assert_eq!(r.hits[0].episode.id, old);
    assert!(r.window.is_some() && !r.window_dropped);
    let r = e.recall("ana", &Query::new("billing yesterday", 5), now).unwrap();
    assert_eq!(r.hits[0].episode.id, new);
    // A window with nothing in it is dropped rather than answering nothing.
    let r = e.recall("ana", &Query::new("billing in March", 5), now).unwrap();
    assert!(r.window_dropped && r.hits.len() == 2);
    // A date written out is a window too: the day named and the next.
    for q in ["what did we decide on 12 November 2024 about billing", "billing on 2024-11-12"] {
        let r = e.recall("ana", &Query::new(q, 5), now).unwrap();
        assert_eq!(r.hits.iter().map(|h| h.episode.id).collect::<Vec<_>>(), vec![old], "{q}");
    }
    let r =
        e.recall("ana", &Query::new("billing between 18 and 19 November 2024", 5), now).unwrap();
    assert_eq!(r.hits.iter().map(|h| h.episode.id).collect::<Vec<_>>(), vec![new]);
    // A date that holds no memory is dropped, and its words are searched for: the calendar
    // entry that names the day is found by them.
    let cal = remember(&mut e, "calendar for 2025-01-15: dentist at 9", "2024-11-19T08:00:00Z");
    let r = e.recall("ana", &Query::new("what is on the calendar for 2025-01-15", 1), now).unwrap();
    assert!(r.window_dropped);
    assert_eq!(r.hits[0].episode.id, cal);
    assert!(r.hits[0].explanation.bm25 > 0.0, "the date's words matched");
}

#[test]
fn filters_statuses_and_policy() {
    let mut e = engine(MemoryStore::new());
    let mut ep = Episode::new("npm install failed with a lockfile conflict", at("2024-11-01"));
    ep.outcome = Outcome::Failure;
    ep.verdict = "delete the lockfile and reinstall".into();
    ep.situation.tool = "npm".into();
    ep.agent = "coder".into();
    ep.tags = vec!["ci".into()];
    let Remembered::Stored { id: lesson, importance, .. } = e.remember("ana", ep, None).unwrap()
    else {
        panic!()
    };
    assert_eq!(importance, 1.0);
    let mut routine = Episode::new("npm install succeeded", at("2024-11-02"));
    routine.outcome = Outcome::Success;
    routine.situation.tool = "npm".into();
    let Remembered::Stored { id: ok, importance, .. } = e.remember("ana", routine, None).unwrap()
    else {
        panic!()
    };
    assert!(importance < 1.0);
    let mut beat = Episode::new("heartbeat", at("2024-11-02"));
    beat.kind = "heartbeat".into();
    assert!(matches!(e.remember("ana", beat, None).unwrap(), Remembered::Discarded { .. }));
    let mut q = Query::new("npm install", 5);
    q.filter = Filter { agent: Some("coder".into()), ..Filter::default() };
    let ids = |r: mnemo::Recall| r.hits.iter().map(|h| h.episode.id).collect::<Vec<_>>();
    assert_eq!(ids(e.recall("ana", &q, at("2024-11-03")).unwrap()), vec![lesson]);
    q.filter = Filter { tags: vec!["ci".into()], tool: Some("NPM".into()), ..Filter::default() };
    assert_eq!(ids(e.recall("ana", &q, at("2024-11-03")).unwrap()), vec![lesson]);
    e.set_status("ana", lesson, Status::Rejected).unwrap();
    assert_eq!(
        ids(e.recall("ana", &Query::new("npm install", 5), at("2024-11-03")).unwrap()),
        vec![ok]
    );
    e.set_status("ana", lesson, Status::Active).unwrap();
    assert_eq!(
        e.recall("ana", &Query::new("npm install", 5), at("2024-11-03")).unwrap().hits.len(),
        2
    );
}

#[test]
fn bad_input_is_typed_and_changes_nothing() {
    let mut e = engine(MemoryStore::new());
    remember(&mut e, "kept", "2024-01-01");
    let before = snapshot(e.store());
    let code = |r: mnemo::Result<Remembered>| r.unwrap_err().code();
    assert_eq!(code(e.remember("ana", Episode::new("  ", 0), None)), "INVALID_INPUT");
    // One byte over the 1 MiB limit is refused (and one over the system prompt's 64 KiB).
    let limit = mnemo::engine::MAX_TEXT_BYTES;
    assert_eq!(
        code(e.remember("ana", Episode::new("a".repeat(limit + 1), 0), None)),
        "INVALID_INPUT"
    );
    let mut system = mnemo::engine::ContextRequest::new("invoice");
    system.system = "s".repeat(mnemo::engine::MAX_SYSTEM_BYTES + 1);
    assert_eq!(e.context("ana", &system, 0).unwrap_err().code(), "INVALID_INPUT");
    assert_eq!(code(e.remember("a/b", Episode::new("text", 0), None)), "INVALID_INPUT");
    let nan = vec![f32::NAN; DIM];
    assert_eq!(code(e.remember("ana", Episode::new("text", 0), Some(&nan))), "INVALID_INPUT");
    assert_eq!(code(e.remember("ana", Episode::new("text", 0), Some(&[1.0; 3]))), "INVALID_INPUT");
    assert_eq!(e.recall("nobody", &Query::new("x", 1), 0).unwrap_err().code(), "UNKNOWN_NAMESPACE");
    assert_eq!(e.recall("ana", &Query::new("", 1), 0).unwrap_err().code(), "INVALID_INPUT");
    let bad = e.set_fact("ana", "k", "v", Source::Explicit, 1.5, Policy::AutoInject, None, 0);
    assert_eq!(bad.unwrap_err().code(), "INVALID_INPUT");
    // An empty value, and a key with a control character in it.
    for (k, v) in
        [("k", ""), ("k", " \n "), ("lang\nuage", "Italian"), ("a\tb", "x"), ("\u{7f}", "x")]
    {
        let bad = e.set_fact("ana", k, v, Source::Explicit, 0.9, Policy::AutoInject, None, 0);
        assert_eq!(bad.unwrap_err().code(), "INVALID_INPUT", "{k:?} = {v:?}");
    }
    assert_eq!(e.set_status("ana", 99, Status::Rejected).unwrap_err().code(), "NOT_FOUND");
    assert_eq!(snapshot(e.store()), before);
    // Vectors from another model are refused, not mixed.
    let mut other = Engine::new(
        e.into_store(),
        Config { vector_model: "other@1".into(), dim: DIM, ..Config::default() },
    );
    let v = vector("text");
    assert_eq!(code(other.remember("ana", Episode::new("text", 0), Some(&v))), "MODEL_MISMATCH");
}

#[test]
fn facts_follow_source_priority_versions_ttl_and_confidence() {
    let mut e = engine(MemoryStore::new());
    let set = |e: &mut Engine<MemoryStore>, v: &str, s: Source, c: f32, t: i64| {
        e.set_fact("ana", "language", v, s, c, Policy::AutoInject, None, t).unwrap()
    };
    assert_eq!(set(&mut e, "Italian", Source::Explicit, 0.9, 1), FactWrite::Written { version: 1 });
    assert_eq!(
        set(&mut e, "English", Source::Implicit, 0.9, 2),
        FactWrite::Refused { held_by: Source::Explicit }
    );
    assert_eq!(set(&mut e, "German", Source::Explicit, 0.9, 3), FactWrite::Written { version: 2 });
    assert_eq!(e.fact("ana", "language", 4, false).unwrap().unwrap().value, "German");
    assert_eq!(e.rollback_fact("ana", "language", 1, 5).unwrap(), 3);
    let h = e.fact_history("ana", "language").unwrap();
    assert_eq!(
        h.iter().map(|f| f.value.as_str()).collect::<Vec<_>>(),
        ["Italian", "German", "Italian"]
    );
    e.set_fact("ana", "guess", "cats", Source::Implicit, 0.3, Policy::AutoInject, None, 1).unwrap();
    assert!(e.fact("ana", "guess", 2, false).unwrap().is_none());
    assert!(e.fact("ana", "guess", 2, true).unwrap().is_some());
    e.set_fact("ana", "task", "draft", Source::Admin, 1.0, Policy::Sensitive, Some(DAY), 0)
        .unwrap();
    assert!(e.fact("ana", "task", DAY - 1, false).unwrap().is_some());
    assert!(e.fact("ana", "task", DAY, false).unwrap().is_none());
    assert_eq!(e.facts("ana", 0, &[Policy::Sensitive], false).unwrap().len(), 1);
    // Triples: agreement raises confidence, contradiction ends the old one.
    let t = e.assert_triple("ana", "marco", "works_at", "acme", 0.5, Source::Implicit, 1).unwrap();
    assert_eq!(t.confidence, 0.5);
    let t = e.assert_triple("ana", "marco", "works_at", "acme", 0.5, Source::Implicit, 2).unwrap();
    assert!((t.confidence - 0.75).abs() < 1e-6);
    e.assert_triple("ana", "marco", "works_at", "globex", 0.8, Source::Implicit, 3).unwrap();
    let all = e.triples("ana", "marco", true).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].object, "globex");
    assert_eq!((all[1].object.as_str(), all[1].valid_to), ("acme", Some(3)));
    assert!(e.delete_fact("ana", "language").unwrap());
    assert!(e.fact_history("ana", "language").unwrap().is_empty());
}

#[test]
fn rules_come_back_whole_and_namespaces_are_forgotten_whole() {
    let mut e = engine(MemoryStore::new());
    let id = e
        .add_rule(
            "ana",
            "Run the linter before committing",
            "obs-1",
            RuleStatus::Candidate,
            Origin::User,
            1,
        )
        .unwrap();
    e.add_rule("ana", "Answer in Italian", "", RuleStatus::Active, Origin::User, 1).unwrap();
    assert_eq!(e.rules("ana", &[RuleStatus::Active]).unwrap().len(), 1);
    e.set_rule_status("ana", id, RuleStatus::Active, 2).unwrap();
    let active = e.rules("ana", &[RuleStatus::Active]).unwrap();
    assert_eq!(active[0].text, "Run the linter before committing");
    remember(&mut e, "something happened", "2024-01-01");
    e.remember("bob", Episode::new("bob's own memory", 0), None).unwrap();
    assert!(e.forget_namespace("ana").unwrap() >= 4);
    assert_eq!(
        e.recall("ana", &Query::new("something", 1), 0).unwrap_err().code(),
        "UNKNOWN_NAMESPACE"
    );
    assert!(e.rules("ana", &[]).unwrap().is_empty());
    assert_eq!(e.recall("bob", &Query::new("memory", 1), 0).unwrap().hits.len(), 1);
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("mnemo-engine-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
