//! Crash images of the engine on the file store: a seeded workload of engine operations
//! (remember, bulk imports of episodes and signals, status changes, facts, rules, signals,
//! snapshots, nightly runs, erasures), then
//! the log cut at write boundaries and at random byte offsets inside writes, as a crash would
//! leave it. Every image must open without a corrupt record, hold exactly the batches written
//! before the cut (the torn one dropped: 0 acknowledged writes lost, nothing half-applied), and
//! answer recalls like an engine over exactly that state.
//!
//! Automatic compaction is off so the log only grows; an erasure's vacuum still rewrites it,
//! which starts a new generation of the file: images are cut within each generation (a crash
//! during the rewrite itself leaves the old or the new file whole, by rename).
//!
//! CI runs 2,000 operations and checks a seeded sample of cuts; `MNEMO_EXHAUSTIVE=1` runs
//! 10,000 operations and checks every write boundary plus 2,000 random cuts.

mod common;

use std::path::PathBuf;

use common::hash_embed::HashEmbedder;
use common::Rng;
use mnemo::engine::{Erasure, FactInput, IngestOptions};
use mnemo::record::{Episode, Origin, RuleStatus, Source, Status};
use mnemo::store::file::FileStore;
use mnemo::store::{Batch, KvStore, MemoryStore};
use mnemo::{Config, Engine, Query};

const DAY: i64 = 86_400_000;
const T0: i64 = 1_717_200_000_000;

enum Event {
    /// A batch written; the log's length after it.
    Batch(Batch, u64),
    /// A vacuum: the log was rewritten (a new generation starts, this long).
    Vacuum(u64),
}

/// The file store, recording every batch and every vacuum with the log's length after it.
struct Recording {
    inner: FileStore,
    events: Vec<Event>,
    /// The bytes of each finished generation of the log (read just before its rewrite).
    generations: Vec<Vec<u8>>,
}

impl Recording {
    fn len(&self) -> u64 {
        std::fs::metadata(self.inner.log_path()).unwrap().len()
    }
}

impl KvStore for Recording {
    fn get(&self, key: &[u8]) -> mnemo::Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> mnemo::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.inner.scan(prefix, after, limit)
    }
    fn write(&mut self, batch: &Batch) -> mnemo::Result<()> {
        self.inner.write(batch)?;
        if !batch.is_empty() {
            let len = self.len();
            self.events.push(Event::Batch(batch.clone(), len));
        }
        Ok(())
    }
    fn vacuum(&mut self) -> mnemo::Result<()> {
        self.generations.push(std::fs::read(self.inner.log_path()).unwrap());
        self.inner.vacuum()?;
        let len = self.len();
        self.events.push(Event::Vacuum(len));
        Ok(())
    }
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mnemo-crash-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const WORDS: &[&str] = &[
    "deploy",
    "invoice",
    "lockfile",
    "cache",
    "timeout",
    "budget",
    "contract",
    "Postgres",
    "Marco",
    "Giulia",
    "billing",
    "review",
    "release",
    "migration",
    "refund",
];

/// Runs `ops` seeded operations; returns the recording.
fn workload(dir: &PathBuf, ops: usize, seed: u64) -> Recording {
    let mut inner = FileStore::open(dir).unwrap();
    inner.set_auto_compact(false);
    let store = Recording { inner, events: Vec::new(), generations: Vec::new() };
    let config = Config { snapshot_after: 200, ..Config::default() };
    let mut e = Engine::new(store, config).with_embedder(Box::new(HashEmbedder));
    let mut rng = Rng(seed);
    let mut ids: Vec<u64> = Vec::new();
    for i in 0..ops {
        let now = T0 + i as i64 * 60_000;
        let w = |rng: &mut Rng| WORDS[rng.below(WORDS.len() as u64) as usize];
        match rng.below(100) {
            0..=54 => {
                let text = format!("{} {} {} (event {i})", w(&mut rng), w(&mut rng), w(&mut rng));
                if let Ok(mnemo::Remembered::Stored { id, .. }) =
                    e.remember("ana", Episode::new(text, now), None)
                {
                    ids.push(id);
                }
            }
            55..=64 if !ids.is_empty() => {
                let id = ids[rng.below(ids.len() as u64) as usize];
                let to = [Status::Rejected, Status::Raw, Status::Superseded][rng.below(3) as usize];
                let _ = e.set_status("ana", id, to); // an erased id is NOT_FOUND: fine
            }
            65..=76 => {
                let f = FactInput {
                    source: [Source::Implicit, Source::Explicit][rng.below(2) as usize],
                    origin: [Origin::User, Origin::Web][rng.below(2) as usize],
                    ..FactInput::new(format!("k{}", rng.below(20)), format!("{} {i}", w(&mut rng)))
                };
                e.write_fact("ana", &f, now).unwrap();
            }
            77..=80 => {
                let text = format!("Always check the {} before the {}", w(&mut rng), w(&mut rng));
                e.add_rule("ana", &text, "", RuleStatus::Active, Origin::User, now).unwrap();
            }
            81..=92 => {
                let ts = format!("2024-06-{:02}T{:02}:{:02}:00Z", 1 + i % 28, i % 24, i % 60);
                let sig = serde_json::json!({"ts": ts, "kind": "edited", "agent": "email",
                    "situation": {"contact": w(&mut rng)},
                    "before": format!("Dear {}; the {} is ready", w(&mut rng), w(&mut rng)),
                    "after": format!("Dear {}, the {} is ready", w(&mut rng), w(&mut rng))});
                e.signal_json("ana", &sig.to_string()).unwrap();
            }
            93..=95 => {
                let mut q = Query::new(w(&mut rng), 5);
                q.touch = rng.below(2) == 0;
                e.recall("ana", &q, now).unwrap();
            }
            96 => {
                e.maintain(false, None).unwrap();
            }
            97 => {
                e.nightly("ana", now + DAY, Some(50)).unwrap();
            }
            98 if i % 2 == 0 => {
                // A bulk import: one batch, whose identities make reruns store nothing twice.
                let lines: Vec<String> = (0..2 + rng.below(5))
                    .map(|j| {
                        serde_json::json!({"id": format!("line-{}", rng.below(300)),
                            "createdAt": now, "text": format!("{} {} imported {j}",
                            w(&mut rng), w(&mut rng))})
                        .to_string()
                    })
                    .collect();
                let options = IngestOptions { origin: Origin::Unknown, now };
                e.ingest_jsonl("ana", &lines.join("\n"), &options).unwrap();
            }
            99 if i % 2 == 0 => {
                let lines: Vec<String> = (0..2 + rng.below(4))
                    .map(|j| {
                        serde_json::json!({"ts": format!("2024-07-01T00:00:{:02}Z", j * 7 % 60),
                            "kind": "edited", "agent": "email", "id": rng.below(100),
                            "before": format!("Dear {};", w(&mut rng)),
                            "after": format!("Dear {},", w(&mut rng))})
                        .to_string()
                    })
                    .collect();
                e.signals_jsonl("ana", &lines.join("\n")).unwrap();
            }
            _ if i % 7 == 0 => {
                e.erase("ana", &Erasure::Subject(w(&mut rng).to_string()), now).unwrap();
            }
            _ => {}
        }
    }
    let mut rec = e.into_store();
    rec.generations.push(std::fs::read(rec.inner.log_path()).unwrap());
    rec
}

/// Everything a store holds, in key order.
fn contents(s: &impl KvStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    s.scan(b"", None, usize::MAX).unwrap()
}

/// Recall answers over a store (no access updates), for comparing two states.
fn answers<S: KvStore>(store: S) -> String {
    let mut e = Engine::new(store, Config::default()).with_embedder(Box::new(HashEmbedder));
    let mut out = String::new();
    for q in ["deploy lockfile", "invoice Marco", "budget review"] {
        let mut query = Query::new(q, 5);
        query.touch = false;
        match e.recall("ana", &query, T0 + 400 * DAY) {
            Ok(r) => {
                for h in r.hits {
                    out += &format!("{} {:.5};", h.episode.id, h.explanation.final_score);
                }
            }
            Err(err) => out += &format!("{};", err.code()),
        }
    }
    assert!(e.quarantined("ana").map(|q| q.is_empty()).unwrap_or(true), "a quarantined record");
    out
}

/// Opens the first `len` bytes of `generation` as a store.
fn image(generation: &[u8], len: usize, scratch: &PathBuf) -> FileStore {
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch).unwrap();
    std::fs::write(scratch.join("mnemo.log"), &generation[..len]).unwrap();
    FileStore::open(scratch).expect("a crash image opens: a torn tail is dropped, never corrupt")
}

#[test]
fn every_crash_image_holds_exactly_the_batches_written_before_the_cut() {
    let exhaustive = std::env::var_os("MNEMO_EXHAUSTIVE").is_some();
    let (ops, random_cuts, boundary_every) =
        if exhaustive { (10_000, 2_000, 1) } else { (2_000, 150, 25) };
    let dir = tempdir("run");
    let rec = workload(&dir, ops, 0x00c0_ffee);
    let batches = rec.events.iter().filter(|e| matches!(e, Event::Batch(..))).count();
    let vacuums = rec.events.len() - batches;
    assert!(batches > ops / 2 && vacuums > 0, "{batches} batches, {vacuums} vacuums");

    // Walk the events with a reference store: at each checked cut, the image must equal it.
    let scratch = dir.join("image");
    let mut reference = MemoryStore::new();
    let mut rng = Rng(0x5eed);
    let mut generation = 0;
    let mut start = 0u64; // where the current generation's first record ends
    let mut prev_len = 0u64;
    let (mut checked_boundaries, mut checked_cuts, mut checked_answers) = (0, 0, 0);
    let cut_probability = (random_cuts as u64 * 1000) / batches as u64;
    for (n, event) in rec.events.iter().enumerate() {
        match event {
            Event::Vacuum(len) => {
                generation += 1;
                start = *len;
                prev_len = *len;
                continue;
            }
            Event::Batch(batch, len) => {
                let gen = &rec.generations[generation];
                // A cut inside this batch's record: the batch is torn, the state is the one before.
                if rng.below(1000) < cut_probability && *len > prev_len + 1 {
                    let cut = prev_len + 1 + rng.below(*len - prev_len - 1);
                    let got = image(gen, cut as usize, &scratch);
                    assert_eq!(
                        contents(&got),
                        contents(&reference),
                        "cut at byte {cut}, event {n}"
                    );
                    checked_cuts += 1;
                }
                reference.write(batch).unwrap();
                prev_len = *len;
                if *len >= start && (n % boundary_every == 0 || n + 1 == rec.events.len()) {
                    let got = image(gen, *len as usize, &scratch);
                    assert_eq!(contents(&got), contents(&reference), "boundary after event {n}");
                    checked_boundaries += 1;
                    if n % (boundary_every * 8) == 0 {
                        let mut copy = MemoryStore::new();
                        let mut all = Batch::new();
                        for (k, v) in contents(&reference) {
                            all.put(k, v);
                        }
                        copy.write(&all).unwrap();
                        assert_eq!(answers(got), answers(copy), "answers after event {n}");
                        checked_answers += 1;
                    }
                }
            }
        }
    }
    eprintln!(
        "crash images: {ops} operations, {batches} batches, {vacuums} vacuums; checked \
         {checked_boundaries} boundaries, {checked_cuts} torn cuts, {checked_answers} answer sets"
    );
    assert!(checked_cuts >= random_cuts / 2 && checked_boundaries > 0 && checked_answers > 0);
}
