//! Snapshots of derived state: a namespace opened from its snapshot answers exactly as the
//! engine that wrote it, after changes made since; a damaged or foreign snapshot is ignored and
//! the namespace rebuilt from its records.

mod common;

use common::hash_embed::HashEmbedder;
use mnemo::embed::passages::TextVectors;
use mnemo::engine::{Filter, Opened};
use mnemo::record::episode::{decode_vectors, encode_vectors};
use mnemo::record::{Episode, Status};
use mnemo::store::file::FileStore;
use mnemo::store::journal::Journaled;
use mnemo::store::{Batch, KvStore, MemoryStore, Namespace, Table};
use mnemo::time::DAY;
use mnemo::{Config, Embedder, Embedding, Engine, Query, Remembered, Role};

const T0: i64 = 1_700_000_000_000;
const WORDS: [&str; 24] = [
    "deploy",
    "cache",
    "lockfile",
    "node",
    "invoice",
    "postgres",
    "billing",
    "timeout",
    "retry",
    "review",
    "marco",
    "stage",
    "build",
    "error",
    "token",
    "quota",
    "worker",
    "index",
    "schema",
    "backup",
    "alert",
    "latency",
    "rollback",
    "migration",
];

fn config() -> Config {
    let mut c = Config { snapshot_after: 1, snapshot_chunk: 4096, ..Config::default() };
    c.vectors.seal_at = 64;
    c
}

fn engine<S: KvStore>(store: S) -> Engine<S> {
    Engine::new(store, config()).with_embedder(Box::new(HashEmbedder))
}

fn text(i: u64) -> String {
    let mut s = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut words = Vec::new();
    for _ in 0..6 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        words.push(WORDS[(s % WORDS.len() as u64) as usize]);
    }
    format!("{} item-{i}", words.join(" "))
}

fn add<S: KvStore>(e: &mut Engine<S>, from: u64, to: u64) {
    for i in from..to {
        let mut ep = Episode::new(text(i), T0 + i as i64 * DAY / 4);
        ep.agent = if i % 3 == 0 { "coder".into() } else { "planner".into() };
        ep.tags = vec![format!("t{}", i % 4)];
        assert!(matches!(e.remember("ana", ep, None).unwrap(), Remembered::Stored { .. }));
    }
}

/// (id, final score) of every hit of a fixed set of queries, filters included.
fn answers<S: KvStore>(e: &mut Engine<S>) -> Vec<Vec<(u64, u32)>> {
    let now = T0 + 400 * DAY;
    let mut out = Vec::new();
    for (i, q) in ["deploy cache lockfile", "invoice billing marco", "item-7", "rollback"]
        .into_iter()
        .enumerate()
    {
        for filter in [
            Filter::default(),
            Filter { agent: Some("coder".into()), ..Filter::default() },
            Filter { tags: vec![format!("t{i}")], ..Filter::default() },
        ] {
            let mut query = Query::new(q, 8);
            query.filter = filter;
            query.touch = false;
            let r = e.recall("ana", &query, now).unwrap();
            out.push(
                r.hits
                    .iter()
                    .map(|h| (h.episode.id, h.explanation.final_score.to_bits()))
                    .collect(),
            );
        }
    }
    out
}

fn everything<S: KvStore>(e: &mut Engine<S>) -> Vec<Episode> {
    e.timeline("ana", i64::MAX, usize::MAX).unwrap()
}

#[test]
fn a_snapshot_open_answers_as_the_engine_that_wrote_it_after_later_changes() {
    let mut a = engine(MemoryStore::new());
    add(&mut a, 0, 300);
    a.set_status("ana", 5, Status::Rejected).unwrap();
    let m = a.maintain(false, None).unwrap();
    assert_eq!(m.snapshots, 1);
    assert!(m.snapshot_bytes > 0 && m.segments >= 1);
    let first_bytes = m.snapshot_bytes;
    // After the snapshot: new episodes, status changes both ways, access updates.
    add(&mut a, 300, 340);
    a.set_status("ana", 9, Status::Superseded).unwrap();
    a.set_status("ana", 5, Status::Active).unwrap();
    let touched = a.recall("ana", &Query::new("deploy cache", 5), T0 + 200 * DAY).unwrap();
    assert_eq!(touched.hits.len(), 5);
    let (want, want_eps) = (answers(&mut a), everything(&mut a));

    let mut b = engine(a.into_store());
    assert_eq!(b.load("ana").unwrap(), 340);
    match b.opened("ana") {
        Some(Opened::Snapshot { watermark, replayed, refreshed }) => {
            assert_eq!((*watermark, *replayed), (301, 40));
            // The touches are not: their statistics come back from the retrieval log.
            assert_eq!(*refreshed, 2, "two episodes changed status");
        }
        other => panic!("not opened from the snapshot: {other:?}"),
    }
    assert_eq!(answers(&mut b), want);
    assert_eq!(everything(&mut b), want_eps);
    assert_eq!(b.episode("ana", 9).unwrap().status, Status::Superseded);
    for h in &touched.hits {
        assert_eq!(b.episode("ana", h.episode.id).unwrap().access_count, 1);
    }

    // A second snapshot is incremental: one part for the 40 new episodes, a fraction of the
    // first snapshot's bytes. Dirty markers stay until a full rewrite for the two status
    // changes, and access entries (12 bytes, no record read on open) for the five touched
    // episodes whose statistics the snapshot folded into their records (their part is older).
    let m = b.maintain(false, None).unwrap();
    assert_eq!(m.snapshots, 1);
    assert!(m.snapshot_bytes * 4 < first_bytes, "{} bytes after {first_bytes}", m.snapshot_bytes);
    let ns = Namespace::new("ana").unwrap();
    let keys = |e: &Engine<MemoryStore>, prefix: &[u8]| {
        e.store().scan(&ns.key(Table::Snapshot, prefix), None, 1000).unwrap().len()
    };
    let markers = |e: &Engine<MemoryStore>| keys(e, b"d/");
    assert_eq!((markers(&b), keys(&b, b"a/")), (2, 5));
    assert_eq!(b.maintain(false, None).unwrap().snapshots, 0, "nothing changed since");
    let mut c = engine(b.into_store());
    c.load("ana").unwrap();
    assert!(matches!(c.opened("ana"), Some(Opened::Snapshot { replayed: 0, refreshed: 2, .. })));
    assert_eq!(answers(&mut c), want);
    assert_eq!(everything(&mut c), want_eps);
    for h in &touched.hits {
        assert_eq!(c.episode("ana", h.episode.id).unwrap().access_count, 1);
    }

    // Markers past an eighth of the watermark (and 256) make the next snapshot a full
    // rewrite, which absorbs them.
    for id in 20..290 {
        c.set_status("ana", id, Status::Superseded).unwrap();
    }
    assert!(markers(&c) > 256);
    assert_eq!(c.maintain(false, None).unwrap().snapshots, 1);
    assert_eq!((markers(&c), keys(&c, b"a/")), (0, 0), "absorbed");
    let (want, want_eps) = (answers(&mut c), everything(&mut c));
    let mut d = engine(c.into_store());
    d.load("ana").unwrap();
    assert!(matches!(d.opened("ana"), Some(Opened::Snapshot { replayed: 0, refreshed: 0, .. })));
    assert_eq!(answers(&mut d), want);
    assert_eq!(everything(&mut d), want_eps);
}

/// `maintain` with a small budget, until it reports done: the calls it took.
fn maintain_in_slices<S: KvStore>(e: &mut Engine<S>, budget: u64) -> usize {
    for calls in 1..10_000 {
        let m = e.maintain(true, Some(budget)).unwrap();
        // Past the budget by at most the row being inserted when it ran out.
        assert!(m.work < budget + 50_000, "{} units for a budget of {budget}", m.work);
        if m.done {
            return calls;
        }
    }
    panic!("maintenance never finished");
}

#[test]
fn maintenance_in_budgeted_slices_builds_what_one_call_builds_and_a_restart_mid_build_loses_nothing(
) {
    let mut whole = engine(MemoryStore::new());
    add(&mut whole, 0, 400);
    let m = whole.maintain(true, None).unwrap();
    assert!(m.done && m.segments == 1 && m.sealed == 400, "{m:?}");
    let want = answers(&mut whole);

    // The same build in slices: the graph does not depend on where the calls stop.
    let mut sliced = engine(MemoryStore::new());
    add(&mut sliced, 0, 400);
    let first = sliced.maintain(true, Some(20_000)).unwrap();
    assert!(!first.done && first.sealed == 0, "{first:?}");
    // Mid-build every answer is already right: the rows being sealed are scanned exactly.
    assert_eq!(answers(&mut sliced), want);
    assert!(maintain_in_slices(&mut sliced, 20_000) > 3);
    assert_eq!(answers(&mut sliced), want);

    // A snapshot taken mid-build keeps the rows being sealed; the reopened engine starts the
    // build again from them and ends with the same index.
    let mut cut = engine(MemoryStore::new());
    add(&mut cut, 0, 400);
    assert!(!cut.maintain(true, Some(20_000)).unwrap().done);
    cut.snapshot("ana").unwrap();
    let mut reopened = engine(cut.into_store());
    reopened.load("ana").unwrap();
    assert!(matches!(reopened.opened("ana"), Some(Opened::Snapshot { replayed: 0, .. })));
    assert_eq!(answers(&mut reopened), want);
    maintain_in_slices(&mut reopened, 20_000);
    assert_eq!(answers(&mut reopened), want);

    // Writes and removals during a build: new episodes are found at once, a removed one
    // never, and the finished segment holds neither as live.
    let mut busy = engine(MemoryStore::new());
    add(&mut busy, 0, 400);
    assert!(!busy.maintain(true, Some(20_000)).unwrap().done);
    add(&mut busy, 400, 420);
    busy.set_status("ana", 7, Status::Rejected).unwrap();
    let found = |e: &mut Engine<MemoryStore>, i: u64| {
        let mut q = Query::new(text(i), 3);
        q.touch = false;
        e.recall("ana", &q, T0 + 400 * DAY).unwrap().hits.iter().any(|h| h.episode.id == i + 1)
    };
    assert!(found(&mut busy, 410), "a write during the build is found");
    maintain_in_slices(&mut busy, 20_000);
    assert!(found(&mut busy, 410));
    assert!(!found(&mut busy, 6), "the rejected episode (id 7) stays out");
}

type Counting = mnemo_bench::CountingStore<MemoryStore>;

/// (records, bytes) the engine's store took since `before` (a snapshot of its counters).
fn since(e: &Engine<Counting>, before: (u64, u64)) -> (u64, u64) {
    (e.store().ops - before.0, e.store().bytes - before.1)
}

fn counters(e: &Engine<Counting>) -> (u64, u64) {
    (e.store().ops, e.store().bytes)
}

/// Reopens the engine's store in a new engine, as after a restart, and loads "ana".
fn reopen(e: Engine<Counting>) -> Engine<Counting> {
    let mut b = engine(e.into_store());
    b.load("ana").unwrap();
    b
}

#[test]
fn a_recall_writes_one_small_record_and_its_access_statistics_survive_a_restart() {
    let mut a = engine(Counting::new(MemoryStore::new()));
    add(&mut a, 0, 200);
    a.maintain(true, None).unwrap();
    let at = |i: i64| T0 + 100 * DAY + i * 60_000;
    let queries = ["deploy cache", "invoice billing", "rollback migration", "worker quota"];
    for i in 0..40 {
        let before = (counters(&a), a.store().batches);
        let r = a.recall("ana", &Query::new(queries[i as usize % 4], 8), at(i)).unwrap();
        assert!(r.retrieval_id.is_some());
        let (records, bytes) = since(&a, before.0);
        assert_eq!(a.store().batches - before.1, 1, "one batch per recall");
        // The first also stores the fold mark; every other one writes its retrieval record alone.
        assert_eq!(records, if i == 0 { 2 } else { 1 }, "recall {i} wrote {records} records");
        assert!(i == 0 || bytes < 200, "recall {i} wrote {bytes} bytes");
    }
    let want = everything(&mut a);
    assert!(want.iter().any(|e| e.access_count >= 10), "popular episodes were recalled often");
    let mut a = reopen(a);
    assert_eq!(everything(&mut a), want, "replayed from the retrieval log");

    // A status change folds the statistics into the records; none is counted twice.
    let popular = want.iter().max_by_key(|e| e.access_count).unwrap().id;
    let before = counters(&a);
    a.set_status("ana", popular, Status::Superseded).unwrap();
    let (records, _) = since(&a, before);
    assert!(records > 2, "the status change carried the pending records: {records}");
    let want = everything(&mut a);
    let mut a = reopen(a);
    assert_eq!(everything(&mut a), want, "after a fold");

    // A clock that goes back behind the fold mark: that recall folds at once, and nothing is
    // lost or doubled.
    a.recall("ana", &Query::new("deploy cache", 8), at(50)).unwrap();
    a.set_status("ana", popular, Status::Active).unwrap();
    let before = counters(&a);
    a.recall("ana", &Query::new("invoice billing", 8), at(45)).unwrap();
    assert!(since(&a, before).0 > 1, "folded in the recall's own batch");
    a.recall("ana", &Query::new("rollback migration", 8), at(60)).unwrap();
    let want = everything(&mut a);
    let mut a = reopen(a);
    assert_eq!(everything(&mut a), want, "after a clock going back");

    // A correction rewrites its episode from memory; a snapshot holds the statistics too.
    let corrected =
        a.recall("ana", &Query::new("worker quota", 3), at(70)).unwrap().hits[0].episode.id;
    a.correct(
        "ana",
        corrected,
        &mnemo::engine::Correction { text: "worker quota fixed".into(), verdict: None },
        None,
        at(71),
    )
    .unwrap();
    a.recall("ana", &Query::new("worker quota", 8), at(72)).unwrap();
    let want = everything(&mut a);
    let mut a = reopen(a);
    assert_eq!(everything(&mut a), want, "after a correction");
    a.recall("ana", &Query::new("deploy cache", 8), at(80)).unwrap();
    a.snapshot("ana").unwrap();
    a.recall("ana", &Query::new("invoice billing", 8), at(81)).unwrap();
    let want = everything(&mut a);
    let mut a = reopen(a);
    assert!(matches!(a.opened("ana"), Some(Opened::Snapshot { .. })));
    assert_eq!(everything(&mut a), want, "after a snapshot and a recall since");
}

#[test]
fn unfolded_retrievals_are_bounded_by_a_fold_every_so_often() {
    let mut a = engine(Counting::new(MemoryStore::new()));
    add(&mut a, 0, 60);
    let mut folds = 0;
    for i in 0..1100 {
        let before = counters(&a);
        a.recall("ana", &Query::new("deploy cache", 4), T0 + 30 * DAY + i * 1000).unwrap();
        folds += usize::from(since(&a, before).0 > 2);
    }
    assert_eq!(folds, 1, "one fold after 1,024 unfolded retrievals");
    let want = everything(&mut a);
    let mut a = reopen(a);
    assert_eq!(everything(&mut a), want);
    assert!(want.iter().map(|e| e.access_count).sum::<u32>() == 4400);
}

fn chunk_keys(s: &MemoryStore) -> Vec<Vec<u8>> {
    let prefix = Namespace::new("ana").unwrap().key(Table::Snapshot, b"p/");
    s.scan(&prefix, None, 10_000).unwrap().into_iter().map(|(k, _)| k).collect()
}

#[test]
fn a_damaged_or_missing_snapshot_is_rebuilt_from_records_and_reported() {
    let mut a = engine(MemoryStore::new());
    add(&mut a, 0, 200);
    a.maintain(true, None).unwrap();
    let store = a.into_store();
    // The answers of a namespace rebuilt from records alone, sealed the same way.
    let rebuilt = |store: MemoryStore| {
        let mut e = engine(store);
        e.load("ana").unwrap();
        let opened = e.opened("ana").cloned();
        e.maintain(true, None).unwrap();
        let got = (answers(&mut e), everything(&mut e));
        // The snapshot written after the rebuild replaces what was left of the old one.
        let mut again = engine(e.into_store());
        again.load("ana").unwrap();
        assert!(
            matches!(again.opened("ana"), Some(Opened::Snapshot { refreshed: 0, .. })),
            "{:?}",
            again.opened("ana")
        );
        assert_eq!((answers(&mut again), everything(&mut again)), got);
        (got.0, got.1, opened)
    };
    let mut bare = store.clone();
    let mut b = Batch::new();
    b.delete(Namespace::new("ana").unwrap().key(Table::Snapshot, b"head"));
    bare.write(&b).unwrap();
    let (want, want_eps, opened) = rebuilt(bare);
    assert_eq!(opened, Some(Opened::Rebuilt { reason: None }));

    let keys = chunk_keys(&store);
    assert!(keys.len() > 3, "small chunks: {}", keys.len());
    type Damage = Box<dyn Fn(&mut MemoryStore)>;
    let damages: Vec<(&str, Damage)> = vec![
        (
            "a flipped bit",
            Box::new(|s: &mut MemoryStore| {
                let k = chunk_keys(s)[2].clone();
                let mut v = s.get(&k).unwrap().unwrap();
                v[100] ^= 4;
                let mut b = Batch::new();
                b.put(k, v);
                s.write(&b).unwrap();
            }),
        ),
        (
            "a lost chunk",
            Box::new(|s: &mut MemoryStore| {
                let mut b = Batch::new();
                b.delete(chunk_keys(s)[1].clone());
                s.write(&b).unwrap();
            }),
        ),
        (
            "a head from another layout",
            Box::new(|s: &mut MemoryStore| {
                let k = Namespace::new("ana").unwrap().key(Table::Snapshot, b"head");
                let mut v = s.get(&k).unwrap().unwrap();
                // Layout string starts after the 6-byte envelope header and its length.
                v[10] ^= 1;
                let mut b = Batch::new();
                b.put(k, v);
                s.write(&b).unwrap();
            }),
        ),
    ];
    for (what, damage) in damages {
        let mut s = store.clone();
        damage(&mut s);
        let (got, got_eps, opened) = rebuilt(s);
        match opened {
            Some(Opened::Rebuilt { reason: Some(r) }) => assert!(!r.is_empty(), "{what}"),
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(got, want, "{what}");
        assert_eq!(got_eps, want_eps, "{what}");
    }
}

/// Writes `v` under `key`, behind the engine's back.
fn put(s: &mut MemoryStore, key: Vec<u8>, v: Option<Vec<u8>>) {
    let mut b = Batch::new();
    match v {
        Some(v) => b.put(key, v),
        None => b.delete(key),
    };
    s.write(&b).unwrap();
}

#[test]
fn vectors_not_sealed_yet_are_read_back_from_their_records_not_stored_twice() {
    let mut a = engine(MemoryStore::new());
    add(&mut a, 0, 100);
    a.maintain(true, None).unwrap();
    // 40 episodes whose vectors are still in the exact delta (it seals at 64).
    add(&mut a, 100, 140);
    a.snapshot("ana").unwrap();
    let want = answers(&mut a);
    let store = a.into_store();
    let mut b = engine(store.clone());
    b.load("ana").unwrap();
    assert!(matches!(b.opened("ana"), Some(Opened::Snapshot { .. })), "{:?}", b.opened("ana"));
    assert_eq!(answers(&mut b), want);

    // The same answers as a namespace rebuilt from the records, whatever became of the
    // vector record of an unsealed episode since: gone (its episode is left to BM25, as a
    // rebuild leaves it), or unreadable (the snapshot is not used; the rebuild sets it aside).
    let ns = Namespace::new("ana").unwrap();
    let vectors: Vec<Vec<u8>> = store
        .scan(&ns.table_prefix(Table::Vector), None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let newest = vectors.last().unwrap().clone();
    let open = |s: MemoryStore| {
        let mut e = engine(s);
        e.load("ana").unwrap();
        let opened = e.opened("ana").cloned();
        let quarantined = e.quarantined("ana").unwrap().len();
        (answers(&mut e), opened, quarantined)
    };
    for (what, value) in [("gone", None), ("unreadable", Some(b"not a vector record".to_vec()))] {
        let mut s = store.clone();
        put(&mut s, newest.clone(), value);
        let mut bare = s.clone();
        put(&mut bare, ns.key(Table::Snapshot, b"head"), None);
        let (rebuilt, _, rebuilt_quarantined) = open(bare);
        let (got, opened, quarantined) = open(s);
        assert_eq!(got, rebuilt, "{what}");
        assert_eq!(quarantined, rebuilt_quarantined, "{what}");
        match (what, opened) {
            ("gone", Some(Opened::Snapshot { .. })) => assert_eq!(quarantined, 0),
            ("unreadable", Some(Opened::Rebuilt { reason: Some(r) })) => {
                assert!(r.contains("vector"), "{r}");
                assert_eq!(quarantined, 1);
            }
            (what, other) => panic!("{what}: opened {other:?}"),
        }
    }
}

/// [`HashEmbedder`] reading at most 48 words, so that a long text is embedded as passages.
struct Passages;

impl Embedder for Passages {
    fn model_id(&self) -> &str {
        HashEmbedder.model_id()
    }
    fn dim(&self) -> usize {
        HashEmbedder.dim()
    }
    fn max_tokens(&self) -> usize {
        64
    }
    fn embed(&mut self, texts: &[&str], role: Role) -> mnemo::Result<Vec<Embedding>> {
        HashEmbedder.embed(texts, role)
    }
    fn truncates(&mut self, text: &str, _role: Role) -> Option<bool> {
        Some(text.split_whitespace().count() > 48)
    }
}

#[test]
fn a_damaged_marker_or_access_entry_never_keeps_a_namespace_from_opening() {
    let mut a = engine(MemoryStore::new());
    add(&mut a, 0, 200);
    a.maintain(true, None).unwrap();
    let want = answers(&mut a);
    let ns = Namespace::new("ana").unwrap();
    let key = |kind: &[u8], tail: &[u8]| {
        let mut k = ns.key(Table::Snapshot, kind);
        k.extend_from_slice(tail);
        k
    };
    let put = |store: &mut MemoryStore, k: Vec<u8>, v: Vec<u8>| {
        let mut b = Batch::new();
        b.put(k, v);
        store.write(&b).unwrap();
    };
    // An access entry of 3 bytes for episode 5: the episode is read again from its record.
    let mut store = a.into_store();
    put(&mut store, key(b"a/", &5u64.to_be_bytes()), vec![1, 2, 3]);
    let mut e = engine(store);
    e.load("ana").unwrap();
    assert!(
        matches!(e.opened("ana"), Some(Opened::Snapshot { refreshed: 1, .. })),
        "{:?}",
        e.opened("ana")
    );
    assert_eq!(answers(&mut e), want);
    // A dirty marker whose key names no episode: the snapshot is set aside and the namespace
    // rebuilt; its next snapshot deletes the marker and opens as one.
    let mut store = e.into_store();
    let bad = key(b"d/", &[1, 2, 3]);
    put(&mut store, bad.clone(), Vec::new());
    let mut e = engine(store);
    e.load("ana").unwrap();
    assert!(
        matches!(e.opened("ana"), Some(Opened::Rebuilt { reason: Some(r) }) if r.contains("dirty marker")),
        "{:?}",
        e.opened("ana")
    );
    assert_eq!(answers(&mut e), want);
    assert_eq!(e.maintain(true, None).unwrap().snapshots, 1);
    assert_eq!(e.store().get(&bad).unwrap(), None);
    let mut f = engine(e.into_store());
    f.load("ana").unwrap();
    assert!(matches!(f.opened("ana"), Some(Opened::Snapshot { .. })), "{:?}", f.opened("ana"));
    assert_eq!(answers(&mut f), want);
}

#[test]
fn an_unsealed_long_text_whose_passages_are_gone_keeps_the_snapshot_usable() {
    let engine = |s: MemoryStore| Engine::new(s, config()).with_embedder(Box::new(Passages));
    let mut a = engine(MemoryStore::new());
    add(&mut a, 0, 100);
    a.maintain(true, None).unwrap();
    // A text long enough to be embedded as passages, not sealed yet: its passage keys are in
    // the snapshot's head.
    let long = (0..300).map(|i| WORDS[i % WORDS.len()]).collect::<Vec<_>>().join(" ");
    let Remembered::Stored { id, .. } =
        a.remember("ana", Episode::new(long, T0 + 200 * DAY), None).unwrap()
    else {
        panic!("stored")
    };
    a.snapshot("ana").unwrap();
    // Its vector record rewritten behind the engine's back with the whole vector alone.
    let mut store = a.into_store();
    let key = Namespace::new("ana").unwrap().key(Table::Vector, &id.to_be_bytes());
    let (model, v) = decode_vectors(&store.get(&key).unwrap().unwrap()).unwrap();
    assert!(!v.passages.is_empty(), "a long text has passages");
    put(&mut store, key, Some(encode_vectors(&model, &TextVectors::single(v.whole))));
    let mut b = engine(store.clone());
    b.load("ana").unwrap();
    assert!(matches!(b.opened("ana"), Some(Opened::Snapshot { .. })), "{:?}", b.opened("ana"));
    let mut bare = store;
    put(&mut bare, Namespace::new("ana").unwrap().key(Table::Snapshot, b"head"), None);
    let mut c = engine(bare);
    assert_eq!(answers(&mut b), answers(&mut c), "as a namespace rebuilt from its records");
}

#[test]
fn snapshots_survive_the_file_store_and_go_with_the_namespace() {
    let dir = std::env::temp_dir().join(format!("mnemo-snapshot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut a = engine(FileStore::open(&dir).unwrap());
    add(&mut a, 0, 150);
    assert_eq!(a.maintain(true, None).unwrap().snapshots, 1);
    let want = answers(&mut a);
    drop(a);
    let mut b = engine(FileStore::open(&dir).unwrap());
    b.load("ana").unwrap();
    assert!(matches!(b.opened("ana"), Some(Opened::Snapshot { replayed: 0, .. })));
    assert_eq!(answers(&mut b), want);
    b.forget_namespace("ana").unwrap();
    let ns = Namespace::new("ana").unwrap();
    assert!(b.store().scan(&ns.table_prefix(Table::Snapshot), None, 10).unwrap().is_empty());
    assert_eq!(b.load("ana").unwrap(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The store after the first `n` of `batches`.
fn image(batches: &[Batch], n: usize) -> MemoryStore {
    let mut s = MemoryStore::new();
    for batch in &batches[..n] {
        s.write(batch).unwrap();
    }
    s
}

/// Snapshot keys and values of a store.
fn snapshot_table(s: &impl KvStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    let ns = Namespace::new("ana").unwrap();
    s.scan(&ns.table_prefix(Table::Snapshot), None, usize::MAX).unwrap()
}

/// (chunks, bytes) of the snapshot parts a store holds.
fn chunk_bytes(s: &impl KvStore) -> (usize, usize) {
    let ns = Namespace::new("ana").unwrap();
    let chunks = s.scan(&ns.key(Table::Snapshot, b"p/"), None, usize::MAX).unwrap();
    (chunks.len(), chunks.iter().map(|(_, v)| v.len()).sum())
}

#[test]
fn a_snapshot_under_a_budget_is_written_in_slices_that_a_crash_or_restart_never_spoils() {
    // Small chunks and a small budget: the segment parts take many chunks and many calls.
    let cfg = || {
        let mut c = Config { snapshot_after: 1, snapshot_chunk: 512, ..config() };
        c.vectors.seal_at = 128;
        c
    };
    let open = |s: MemoryStore| Engine::new(s, cfg()).with_embedder(Box::new(HashEmbedder));
    let mut whole = open(MemoryStore::new());
    add(&mut whole, 0, 600);
    whole.maintain(true, None).unwrap();
    let want = answers(&mut whole);

    // A journaled store keeps every batch it took, in order: a crash leaves a prefix of them
    // (each batch is atomic).
    let mut e = Engine::new(Journaled::new(MemoryStore::new()), cfg())
        .with_embedder(Box::new(HashEmbedder));
    add(&mut e, 0, 600);
    let mut batches = e.store_mut().take();
    let filled = batches.len();
    let budget = 500; // 12 kB of snapshot a call
    let (mut calls, mut ahead_calls, mut max_bytes, mut written) = (0, 0, 0, 0);
    let mut restarted = false;
    loop {
        calls += 1;
        assert!(calls < 10_000, "maintenance never finished");
        let m = e.maintain(true, Some(budget)).unwrap();
        written += m.snapshot_bytes;
        if m.snapshots == 0 && m.snapshot_bytes > 0 {
            ahead_calls += 1;
            max_bytes = max_bytes.max(m.snapshot_bytes);
        }
        if m.done {
            break;
        }
        // Half-way through the parts written ahead, a restart: the segments were in memory
        // only, so what was written ahead is deleted and written again from the rebuilt ones.
        if ahead_calls == 4 && !restarted {
            restarted = true;
            let before = snapshot_table(e.store());
            let store = std::mem::take(e.store_mut());
            e = Engine::new(store, cfg()).with_embedder(Box::new(HashEmbedder));
            e.load("ana").unwrap();
            assert_eq!(snapshot_table(e.store()), before, "opening writes nothing");
        }
    }
    assert!(restarted && ahead_calls > 4, "{ahead_calls} calls wrote segment parts ahead");
    // A slice is the budget's worth of whole chunks: 12 kB rounded up to 512-byte chunks.
    assert!(max_bytes <= budget as usize * 24 + 512, "a call wrote {max_bytes} bytes ahead");
    assert_eq!(answers(&mut e), want);

    // The finished snapshot opens as one, and answers as the engine that wrote it.
    batches.extend(e.store_mut().take());
    let mut reopened = open(image(&batches, batches.len()));
    let stored = chunk_bytes(reopened.store());
    reopened.load("ana").unwrap();
    assert!(matches!(reopened.opened("ana"), Some(Opened::Snapshot { replayed: 0, .. })));
    assert_eq!(answers(&mut reopened), want);

    // A crash after any batch of the maintenance: the image opens (from the snapshot there is,
    // or rebuilt), answers right, and maintenance from it ends with a snapshot that opens as one
    // and holds no chunk its head does not list.
    for n in filled..=batches.len() {
        let mut c = open(image(&batches, n));
        c.load("ana").unwrap();
        assert_eq!(answers(&mut c), want, "crash after batch {n}");
        while !c.maintain(true, Some(budget)).unwrap().done {}
        // The same parts as without the crash: nothing written ahead was left behind.
        assert_eq!(chunk_bytes(c.store()), stored, "after batch {n}");
        let mut again = open(c.into_store());
        again.load("ana").unwrap();
        assert!(
            matches!(again.opened("ana"), Some(Opened::Snapshot { .. })),
            "after batch {n}: {:?}",
            again.opened("ana")
        );
        assert_eq!(answers(&mut again), want, "after batch {n}, finished");
    }
    assert!(written > stored.1, "the restart wrote {written} bytes, {} stored", stored.1);
}

/// Calls `maintain(force, budget)` until done, as a host whose process lives `life` calls
/// would: before every `life`-th call (counted in `calls` across uses) the engine is dropped
/// and the namespace opened again from the store. Returns the calls made.
fn restarting<S: KvStore + Default>(
    e: &mut Engine<S>,
    reopen: impl Fn(S) -> Engine<S>,
    force: bool,
    budget: u64,
    life: usize,
    calls: &mut usize,
) -> usize {
    let mut made = 0;
    loop {
        (*calls, made) = (*calls + 1, made + 1);
        assert!(made < 1_000, "maintenance never finished ({} restarts)", made / life);
        if calls.is_multiple_of(life) {
            *e = reopen(std::mem::take(e.store_mut()));
            e.load("ana").unwrap();
        }
        if e.maintain(force, Some(budget)).unwrap().done {
            return made;
        }
    }
}

#[test]
fn a_long_merge_goes_on_from_its_stored_progress_when_the_host_restarts_every_few_calls() {
    // Seals of 128 rows, merged up to 1,024: the last merges take many budgeted calls.
    let cfg = || {
        let mut c = Config { snapshot_after: 1, ..config() };
        c.vectors.seal_at = 128;
        c
    };
    let open = |s: MemoryStore| Engine::new(s, cfg()).with_embedder(Box::new(HashEmbedder));
    let mut whole = open(MemoryStore::new());
    for block in 0..8 {
        add(&mut whole, block * 128, (block + 1) * 128);
        whole.maintain(false, None).unwrap();
    }
    let want = answers(&mut whole);

    // A host whose process lives six maintenance calls (an extension's service worker stopped
    // when idle, an evicted Durable Object). A merge that started from its first row after
    // each restart would never end: the last ones need more than six calls.
    let (budget, life) = (10_000, 6);
    let journaled = |s| Engine::new(s, cfg()).with_embedder(Box::new(HashEmbedder));
    let mut e = journaled(Journaled::new(MemoryStore::new()));
    let (mut calls, mut longest, mut last_block) = (0, 0, 0);
    let mut batches = Vec::new();
    for block in 0..8 {
        add(&mut e, block * 128, (block + 1) * 128);
        batches.extend(e.store_mut().take());
        last_block = batches.len();
        let reopen = |s| journaled(s);
        longest = longest.max(restarting(&mut e, reopen, false, budget, life, &mut calls));
    }
    assert!(longest > 2 * life, "the longest block took {longest} calls");
    assert_eq!(answers(&mut e), want, "the same graphs as without restarts");
    batches.extend(e.store_mut().take());
    let mut reopened = open(image(&batches, batches.len()));
    reopened.load("ana").unwrap();
    assert!(matches!(reopened.opened("ana"), Some(Opened::Snapshot { replayed: 0, .. })));
    assert_eq!(answers(&mut reopened), want);

    // A crash after any batch of the last block's maintenance (seals, the merges up to 1,024
    // rows, their progress and snapshots): the image opens, and maintenance from it ends with
    // the same answers.
    for n in last_block..=batches.len() {
        let mut c = open(image(&batches, n));
        c.load("ana").unwrap();
        let mut calls = 0;
        while !c.maintain(false, Some(budget)).unwrap().done {
            calls += 1;
            assert!(calls < 500, "after batch {n}: maintenance never finished");
        }
        assert_eq!(answers(&mut c), want, "after batch {n}");
    }
}

#[test]
fn a_long_seal_goes_on_from_its_stored_progress_when_the_host_restarts_every_few_calls() {
    // A bulk import: 1,024 episodes, then one seal of them all, which takes many calls.
    let open = |s: MemoryStore| Engine::new(s, config()).with_embedder(Box::new(HashEmbedder));
    let mut whole = open(MemoryStore::new());
    add(&mut whole, 0, 1024);
    whole.maintain(true, None).unwrap();
    let want = answers(&mut whole);
    let (budget, life) = (10_000, 6);
    let mut e = open(MemoryStore::new());
    add(&mut e, 0, 1024);
    let mut calls = 0;
    restarting(&mut e, open, true, budget, life, &mut calls);
    assert!(calls > 2 * life, "{calls} calls, so {} restarts", calls / life);
    assert_eq!(answers(&mut e), want, "the same graph as without restarts");
    let mut reopened = open(e.into_store());
    reopened.load("ana").unwrap();
    assert!(matches!(reopened.opened("ana"), Some(Opened::Snapshot { replayed: 0, .. })));
    assert_eq!(answers(&mut reopened), want);
}

#[test]
fn each_sealed_row_is_written_once_and_a_merge_writes_only_ids_seqs_and_links() {
    let mut c = Config { dim: 384, snapshot_after: 1, snapshot_chunk: 1 << 16, ..config() };
    c.vectors.seal_at = 64;
    let mut e = Engine::new(Journaled::new(MemoryStore::new()), c.clone());
    let n = 2048u64;
    // Host-made vectors, the size of the default model's.
    let vectors = mnemo_bench::e5_like_portable(n as usize, 384, 3);
    let (mut merges, mut snapshots) = (0, 0);
    for i in 0..n {
        let ep = Episode::new(text(i), T0 + i as i64 * 1000);
        e.remember("ana", ep, Some(&vectors[i as usize])).unwrap();
        if i % 64 == 63 {
            let m = e.maintain(false, None).unwrap();
            (merges, snapshots) = (merges + m.merges, snapshots + m.snapshots);
        }
    }
    let ns = Namespace::new("ana").unwrap();
    let parts = ns.key(Table::Snapshot, b"p/");
    let batches = e.store_mut().take();
    let written: usize = batches
        .iter()
        .flat_map(|b| b.ops())
        .map(|op| match op {
            mnemo::store::Op::Put(k, v) if k.starts_with(&parts) => v.len(),
            _ => 0,
        })
        .sum();
    // 32 seals of 64 rows merged into one segment of 2,048: each row is in a segment part
    // about six times (its seal and five merges). Rewriting its 388 bytes (a scale and 384
    // int8s) each time would come to about 7× the rows' bytes (reckoned, not measured); stored
    // once (2.05× measured), the rows take 1×, ids, seqs and links well under 1×, the episodes
    // parts the rest.
    let rows = n as usize * (4 + 384);
    assert!(merges >= 25 && snapshots >= 32, "{merges} merges, {snapshots} snapshots");
    let ratio = written as f64 / rows as f64;
    assert!(ratio < 3.0, "{written} bytes of parts for {rows} bytes of rows ({ratio:.2}×)");

    // The namespace opens from those parts, its rows whole: the same recall as before.
    fn top<S: KvStore>(e: &mut Engine<S>, q: &Query) -> Vec<(u64, u32)> {
        let r = e.recall("ana", q, T0 + 400 * DAY).unwrap();
        r.hits.iter().map(|h| (h.episode.id, h.explanation.final_score.to_bits())).collect()
    }
    let mut q = Query::new("deploy cache", 10);
    (q.vector, q.touch) = (Some(vectors[7].clone()), false);
    let want = top(&mut e, &q);
    assert!(want.iter().any(|h| h.0 == 8), "episode 8, whose vector is the query's: {want:?}");
    let mut b = Engine::new(image(&batches, batches.len()), c);
    b.load("ana").unwrap();
    assert!(matches!(b.opened("ana"), Some(Opened::Snapshot { .. })), "{:?}", b.opened("ana"));
    assert_eq!(top(&mut b, &q), want);
}

#[test]
fn a_first_snapshot_written_ahead_over_an_unusable_ones_chunks_opens_as_one() {
    // A snapshot whose head is gone (as after a layout change): its chunks are left over.
    let mut a = engine(MemoryStore::new());
    add(&mut a, 0, 300);
    a.maintain(true, None).unwrap();
    let want = answers(&mut a);
    let mut store = a.into_store();
    let ns = Namespace::new("ana").unwrap();
    put(&mut store, ns.key(Table::Snapshot, b"head"), None);
    assert!(chunk_bytes(&store).0 > 0, "the old chunks are there");

    // Rebuilt, then snapshotted under a budget large enough for one call: the parts written
    // ahead must not be taken for the old chunks the snapshot deletes.
    let mut b = engine(store);
    b.load("ana").unwrap();
    assert!(matches!(b.opened("ana"), Some(Opened::Rebuilt { reason: None })));
    while !b.maintain(true, Some(1 << 30)).unwrap().done {}
    let mut c = engine(b.into_store());
    c.load("ana").unwrap();
    assert!(matches!(c.opened("ana"), Some(Opened::Snapshot { .. })), "{:?}", c.opened("ana"));
    assert_eq!(answers(&mut c), want);
}
