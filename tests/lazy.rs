//! An asynchronous host that keeps episodes, vectors and snapshots in its own storage
//! (`store::journal`'s lazy prefixes, `engine::lazy`): every call answers exactly as an engine
//! holding everything, writes the same bytes, and never writes before it has read what it
//! needed (a call that asks for records has written nothing, so running it again is safe).

mod common;

use common::hash_embed::HashEmbedder;
use mnemo::engine::{Correction, Erasure, Filter};
use mnemo::record::{Episode, Status};
use mnemo::store::journal::{Journaled, Need};
use mnemo::store::{KvStore, MemoryStore};
use mnemo::time::DAY;
use mnemo::{Config, Engine, Error, Query};

const T0: i64 = 1_700_000_000_000;
const NS: &str = "ana";
const WORDS: [&str; 16] = [
    "deploy", "cache", "lockfile", "invoice", "postgres", "billing", "timeout", "retry", "marco",
    "stage", "build", "token", "quota", "worker", "schema", "rollback",
];

fn config() -> Config {
    let mut c = Config { snapshot_after: 64, snapshot_chunk: 4096, ..Config::default() };
    c.vectors.seal_at = 128;
    c
}

fn text(i: u64) -> String {
    let mut s = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let n = if i.is_multiple_of(17) { 160 } else { 8 }; // some long enough to be stored as passages
    let mut words = Vec::new();
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        words.push(WORDS[(s % WORDS.len() as u64) as usize]);
    }
    format!("{} item-{i}", words.join(" "))
}

fn all(s: &impl KvStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    s.scan(b"", None, usize::MAX).unwrap()
}

/// The host: its storage, and an engine over a mirror that holds only what calls need.
struct Host {
    storage: MemoryStore,
    engine: Engine<Journaled<MemoryStore>>,
    /// Calls that had to fetch records and run again.
    retried: usize,
}

impl Host {
    /// Opens the namespace as the JS package does: lazy tables first, the other tables
    /// preloaded, the records loading needs fetched, the snapshot handed over part by part.
    fn open(storage: MemoryStore) -> Host {
        let engine = Engine::new(Journaled::new(MemoryStore::new()), config())
            .with_embedder(Box::new(HashEmbedder));
        let mut host = Host { storage, engine, retried: 0 };
        for prefix in Engine::<MemoryStore>::lazy_prefixes(NS).unwrap() {
            host.engine.store_mut().make_lazy(prefix);
        }
        let mut eager = mnemo::store::Batch::new();
        for prefix in Engine::<MemoryStore>::eager_prefixes(NS).unwrap() {
            for (k, v) in host.storage.scan(&prefix, None, usize::MAX).unwrap() {
                eager.put(k, v);
            }
        }
        host.engine.store_mut().preload(&eager).unwrap();
        // The head and the vector records of the rows the snapshot left out, then nothing
        // held while the parts come in.
        let parts = host.run(|e| e.load_parts(NS), false).unwrap();
        host.engine.store_mut().settle().unwrap();
        for prefix in parts {
            // A page of three chunks at a time, as the package reads them a page at a time.
            let mut after: Option<Vec<u8>> = None;
            loop {
                let page = host.storage.scan(&prefix, after.as_deref(), 3).unwrap();
                for (_, chunk) in &page {
                    if let Some(room) = host.engine.load_chunk(NS, chunk.len()).unwrap() {
                        room.copy_from_slice(chunk);
                    }
                }
                match page.last() {
                    Some((k, _)) if page.len() == 3 => after = Some(k.clone()),
                    _ => break,
                }
            }
            host.engine.load_part_end(NS).unwrap();
            let mirror = host.engine.store().inner();
            assert!(mirror.scan(&prefix, None, 1).unwrap().is_empty(), "no chunk in the mirror");
        }
        let needs = host.run(|e| e.load_needs(NS), false).unwrap();
        host.fetch(needs);
        host.call(|e| e.load(NS)).unwrap();
        host
    }

    fn fetch(&mut self, needs: Vec<Need>) {
        assert!(!needs.is_empty(), "a NEED_RECORDS error names what it needs");
        for need in needs {
            match need {
                Need::Key(k) => {
                    let v = self.storage.get(&k).unwrap();
                    self.engine.store_mut().hold(vec![k], vec![v]).unwrap();
                }
                Need::Range { prefix, after } => {
                    let entries = self.storage.scan(&prefix, after.as_deref(), usize::MAX).unwrap();
                    self.engine.store_mut().hold_range(prefix, after, entries).unwrap();
                }
            }
        }
    }

    /// Runs `f` as the JS package does: fetch what it needs and run it again, then store its
    /// writes and drop what the mirror held.
    fn call<T>(
        &mut self,
        f: impl FnMut(&mut Engine<Journaled<MemoryStore>>) -> mnemo::Result<T>,
    ) -> mnemo::Result<T> {
        self.run(f, true)
    }

    /// [`Host::call`]; `settle`: drop what the mirror held once it returns (the package does
    /// not between the steps of a load).
    fn run<T>(
        &mut self,
        mut f: impl FnMut(&mut Engine<Journaled<MemoryStore>>) -> mnemo::Result<T>,
        settle: bool,
    ) -> mnemo::Result<T> {
        for _ in 0..16 {
            let result = f(&mut self.engine);
            let writes = self.engine.store_mut().take();
            if let Err(Error::NeedRecords { .. }) = result {
                assert!(
                    writes.is_empty(),
                    "a call wrote {} batches before it needed records",
                    writes.len()
                );
                let needs = self.engine.store_mut().take_needs();
                self.fetch(needs);
                self.retried += 1;
                continue;
            }
            for b in &writes {
                self.storage.write(b).unwrap();
            }
            if settle {
                self.engine.store_mut().settle().unwrap();
            }
            return result;
        }
        panic!("still needing records after 16 rounds");
    }
}

fn engine(storage: MemoryStore) -> Engine<MemoryStore> {
    Engine::new(storage, config()).with_embedder(Box::new(HashEmbedder))
}

/// A hit as compared: id, score bits, and the matched passage's span.
type Seen = (u64, u32, Option<(u32, u32)>);

/// Each hit as compared.
fn hits(r: &mnemo::Recall) -> Vec<Seen> {
    r.hits
        .iter()
        .map(|h| {
            let span = h.explanation.passage.as_ref().map(|p| (p.start, p.end));
            (h.episode.id, h.explanation.final_score.to_bits(), span)
        })
        .collect()
}

#[test]
fn a_host_that_keeps_the_large_tables_in_its_storage_answers_and_writes_as_one_holding_all() {
    // A namespace with a snapshot, episodes past it and episodes changed since.
    let mut seed = engine(MemoryStore::new());
    for i in 0..300 {
        let mut e = Episode::new(text(i), T0 + i as i64 * DAY / 4);
        e.tags = vec![format!("t{}", i % 3)];
        seed.remember(NS, e, None).unwrap();
    }
    seed.maintain(true, None).unwrap();
    for i in 300..340 {
        seed.remember(NS, Episode::new(text(i), T0 + i as i64 * DAY / 4), None).unwrap();
    }
    seed.set_status(NS, 7, Status::Rejected).unwrap();
    seed.set_status(NS, 12, Status::Superseded).unwrap();
    let storage = seed.into_store();

    let mut plain = engine(storage.clone());
    let mut host = Host::open(storage);
    let held = all(host.engine.store().inner()).len();
    assert!(held < 60, "the mirror holds {held} records after the load, not the episodes");
    let now = T0 + 120 * DAY;
    let queries = ["deploy cache lockfile", "invoice billing marco", "item-51", "rollback schema"];
    for (round, q) in queries.iter().enumerate() {
        let mut query = Query::new(*q, 8);
        if round == 1 {
            query.filter = Filter { tags: vec!["t1".into()], ..Filter::default() };
        }
        let want = plain.recall(NS, &query, now + round as i64).unwrap();
        let got = host.call(|e| e.recall(NS, &query, now + round as i64)).unwrap();
        assert_eq!(hits(&got), hits(&want), "{q}");
    }
    // Writes of every kind, each compared by its answer.
    let fresh = Episode::new("the marco invoice was paid twice", now + 10);
    let a = plain.remember(NS, fresh.clone(), None).unwrap();
    assert_eq!(host.call(|e| e.remember(NS, fresh.clone(), None)).unwrap(), a);
    plain.set_status(NS, 30, Status::Rejected).unwrap();
    host.call(|e| e.set_status(NS, 30, Status::Rejected)).unwrap();
    plain.set_status(NS, 7, Status::Active).unwrap();
    host.call(|e| e.set_status(NS, 7, Status::Active)).unwrap();
    let fix = Correction { text: "the stage build uses the blue cluster".into(), verdict: None };
    let a = plain.correct(NS, 40, &fix, None, now + 20).unwrap();
    let b = host.call(|e| e.correct(NS, 40, &fix, None, now + 20)).unwrap();
    assert_eq!(serde_json::to_value(&b).unwrap(), serde_json::to_value(&a).unwrap());
    let a = plain.erase(NS, &Erasure::Episode(41), now + 30).unwrap();
    let b = host.call(|e| e.erase(NS, &Erasure::Episode(41), now + 30)).unwrap();
    assert_eq!(serde_json::to_value(&b).unwrap(), serde_json::to_value(&a).unwrap());
    let a = plain.erase(NS, &Erasure::Subject("marco".into()), now + 40).unwrap();
    let b = host.call(|e| e.erase(NS, &Erasure::Subject("marco".into()), now + 40)).unwrap();
    assert_eq!(serde_json::to_value(&b).unwrap(), serde_json::to_value(&a).unwrap());
    let a = plain.nightly(NS, now + DAY, None).unwrap();
    let b = host.call(|e| e.nightly(NS, now + DAY, None)).unwrap();
    assert_eq!(serde_json::to_value(&b).unwrap(), serde_json::to_value(&a).unwrap());
    assert_eq!(host.call(|e| e.maintain(true, None)).unwrap(), plain.maintain(true, None).unwrap());
    assert_eq!(host.call(|e| e.export_json(NS, now)).unwrap(), plain.export_json(NS, now).unwrap());
    assert_eq!(
        host.call(|e| e.timeline(NS, i64::MAX, usize::MAX)).unwrap(),
        plain.timeline(NS, i64::MAX, usize::MAX).unwrap()
    );
    assert!(host.retried > 0, "some calls had to fetch records");
    assert_eq!(all(&host.storage), all(plain.store()), "the same bytes in storage");

    // Opened again from what the host stored: the same answers.
    let mut plain = engine(plain.into_store());
    let mut host = Host::open(host.storage);
    for q in queries {
        let query = Query::new(q, 8);
        let want = plain.recall(NS, &query, now + 2 * DAY).unwrap();
        let got = host.call(|e| e.recall(NS, &query, now + 2 * DAY)).unwrap();
        assert_eq!(hits(&got), hits(&want), "{q}");
    }
    assert_eq!(all(&host.storage), all(plain.store()));
}

/// 300 episodes in a snapshot, then 20 more: the store of the tests of damaged snapshots.
fn snapshotted_320() -> MemoryStore {
    let mut seed = engine(MemoryStore::new());
    for i in 0..300 {
        seed.remember(NS, Episode::new(text(i), T0 + i as i64 * DAY / 4), None).unwrap();
    }
    seed.maintain(true, None).unwrap();
    for i in 300..320 {
        seed.remember(NS, Episode::new(text(i), T0 + i as i64 * DAY / 4), None).unwrap();
    }
    seed.into_store()
}

#[test]
fn chunks_past_a_parts_length_make_the_snapshot_unusable_and_are_not_kept() {
    let mut storage = snapshotted_320();
    // A stray chunk after a part's last one: more bytes than the head gives the part.
    let last = storage
        .scan(b"", None, usize::MAX)
        .unwrap()
        .into_iter()
        .rfind(|(k, _)| k.windows(2).any(|w| w == b"p/"))
        .expect("a snapshot chunk");
    let mut key = last.0.clone();
    *key.last_mut().unwrap() += 1;
    let mut batch = mnemo::store::Batch::new();
    batch.put(key, vec![7; 64]);
    storage.write(&batch).unwrap();
    let mut host = Host::open(storage);
    match host.engine.opened(NS) {
        Some(mnemo::engine::Opened::Rebuilt { reason: Some(r) }) => {
            assert!(r.contains("more than"), "{r}")
        }
        other => panic!("opened {other:?}"),
    }
    assert_eq!(host.call(|e| e.timeline(NS, i64::MAX, usize::MAX)).unwrap().len(), 320);
    // Chunks with no snapshot being handed over are a caller's mistake, said as such.
    let err = host.engine.load_chunk("elsewhere", 10).map(|_| ()).unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
}

#[test]
fn a_damaged_snapshot_part_handed_over_is_rebuilt_from_every_record() {
    let mut storage = snapshotted_320();
    // One byte of one chunk flipped, as a storage fault would.
    let chunks = storage.scan(b"", None, usize::MAX).unwrap();
    let (key, mut value) = chunks
        .into_iter()
        .find(|(k, v)| k.windows(2).any(|w| w == b"p/") && v.len() > 100)
        .expect("a snapshot chunk");
    value[50] ^= 0x20;
    let mut batch = mnemo::store::Batch::new();
    batch.put(key, value);
    storage.write(&batch).unwrap();

    let mut plain = engine(storage.clone());
    let mut host = Host::open(storage);
    let reason = match host.engine.opened(NS) {
        Some(mnemo::engine::Opened::Rebuilt { reason: Some(r) }) => r.clone(),
        other => panic!("opened {other:?}"),
    };
    assert!(reason.contains("hash"), "{reason}");
    assert!(host.retried > 0, "the rebuild asked for every record");
    let now = T0 + 200 * DAY;
    assert_eq!(host.call(|e| e.timeline(NS, i64::MAX, usize::MAX)).unwrap().len(), 320);
    for q in ["deploy cache lockfile", "item-51", "item-310"] {
        let query = Query::new(q, 8);
        let want = plain.recall(NS, &query, now).unwrap();
        let got = host.call(|e| e.recall(NS, &query, now)).unwrap();
        assert_eq!(hits(&got), hits(&want), "{q}");
    }
}
