//! Benchmark workloads shared by the native benches (`benches/`) and the wasm build (run under
//! Node by `tools/bench-store`), so both measure the same thing.
//!
//! Data is synthetic: vectors shaped like E5's (a shared direction, 1,000 topic clusters and
//! noise: pairwise cosines around 0.7–0.9) and 12-word texts from a 5,000-word Zipf-like
//! vocabulary. Embedding is excluded: vectors are supplied as a host would.

use mnemo::engine::Opened;
use mnemo::record::Episode;
use mnemo::store::{Batch, KvStore, MemoryStore, Namespace, Table};
use mnemo::{Config, Engine, Query};

/// xorshift64: deterministic, seedable, no dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn gauss(&mut self) -> f32 {
        let u = (self.next_u64() % 1_000_000 + 1) as f32 / 1_000_001.0;
        let v = (self.next_u64() % 1_000_000) as f32 / 1_000_000.0;
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
    fn vec(&mut self, dim: usize) -> Vec<f32> {
        (0..dim).map(|_| self.gauss()).collect()
    }
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// `n` vectors in `dim` dimensions drawn around 1,000 topics.
pub fn e5_like(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = Rng(seed | 1);
    let common = unit(rng.vec(dim));
    let topics: Vec<Vec<f32>> = (0..1000).map(|_| unit(rng.vec(dim))).collect();
    (0..n)
        .map(|_| {
            let t = &topics[(rng.next_u64() % 1000) as usize];
            let noise = unit(rng.vec(dim));
            unit((0..dim).map(|i| 0.85 * common[i] + 0.45 * t[i] + 0.3 * noise[i]).collect())
        })
        .collect()
}

fn word(rng: &mut Rng) -> String {
    const SYL: [&str; 20] = [
        "ka", "lo", "mi", "ter", "den", "sa", "po", "ri", "gen", "tu", "va", "nel", "cor", "bi",
        "fa", "mon", "le", "zu", "qui", "ro",
    ];
    let id = (rng.next_u64() % 5000).min(rng.next_u64() % 5000);
    let syl = |i: u64| SYL[(i % 20) as usize];
    format!("{}{}{}", syl(id), syl(id / 20), syl(id / 400))
}

/// [`e5_like`] with only additions, multiplications and square roots (an Irwin–Hall normal
/// instead of Box–Muller's `ln` and `cos`, whose last bits differ between the platform's libm
/// and wasm's): the same vectors bit for bit natively and in wasm, for workloads whose stored
/// bytes are compared across the two.
pub fn e5_like_portable(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = Rng(seed | 1);
    let mut normal = move || {
        (0..12).map(|_| (rng.next_u64() % 1_000_000) as f32 / 1_000_000.0).sum::<f32>() - 6.0
    };
    let mut vec = |dim: usize| unit((0..dim).map(|_| normal()).collect());
    let common = vec(dim);
    let topics: Vec<Vec<f32>> = (0..1000).map(|_| vec(dim)).collect();
    let mut pick = Rng(seed.rotate_left(17) | 1);
    (0..n)
        .map(|_| {
            let t = &topics[(pick.next_u64() % 1000) as usize];
            let noise = vec(dim);
            unit((0..dim).map(|i| 0.85 * common[i] + 0.45 * t[i] + 0.3 * noise[i]).collect())
        })
        .collect()
}

/// `n` texts of 12 words.
pub fn texts(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| (0..12).map(|_| word(&mut rng)).collect::<Vec<_>>().join(" ")).collect()
}

/// What [`store`] measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StoreReport {
    /// Episodes.
    pub n: usize,
    /// Episodes remembered per second (embedding excluded, index build excluded).
    pub ingest_per_s: f64,
    /// Seconds to seal everything into HNSW: `maintain(true)` calls of the default budget
    /// until done (the call that writes the first snapshot is timed apart).
    pub index_build_s: f64,
    /// Segments after the build.
    pub segments: usize,
    /// `maintain` calls the build and first snapshot took.
    pub maintain_calls: usize,
    /// The longest of them (ms).
    pub longest_maintain_ms: f64,
    /// The longest of those that wrote snapshot bytes (parts written ahead, a build's
    /// progress, the head's call) (ms).
    pub longest_snapshot_call_ms: f64,
    /// Recall latency percentiles, query embedding excluded (ms).
    pub recall_p50_ms: f64,
    /// 99th percentile.
    pub recall_p99_ms: f64,
    /// The calls that wrote snapshot bytes during the build, summed (ms).
    pub snapshot_write_ms: f64,
    /// The snapshot bytes they wrote (MB): the first snapshot's parts, and the progress of
    /// the long seal stored along the way (`index::progress`).
    pub snapshot_mb: f64,
    /// Opening the store again and loading the namespace from its snapshot (ms).
    pub cold_open_ms: f64,
    /// Loading it from the records alone, rebuilding every index (ms).
    pub rebuild_open_ms: f64,
    /// Recall p50 right after the cold open (ms).
    pub recall_after_open_p50_ms: f64,
    /// The engine's own estimate of its memory after the cold open (MB).
    pub engine_estimate_mb: f64,
    /// Process memory growth while ingesting and indexing (RSS natively, linear memory in
    /// wasm), store included (MB).
    pub memory_growth_mb: f64,
}

/// The `q` quantile of `v` (NaN when `v` is empty: a bench without queries has no latency).
fn pct(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

/// Bytes of memory the process holds: RSS natively, linear memory in wasm.
pub fn memory_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) as u64 * 65_536
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_string();
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map_or(0, |kb| kb * 1024)
    }
}

/// Ingests `n` synthetic episodes, builds the index, times `queries` recalls, reopens the store
/// and times recalls again. `clock` returns milliseconds (the host's: `Instant`,
/// `performance.now()`).
pub fn store(n: usize, queries: usize, clock: &mut dyn FnMut() -> f64) -> StoreReport {
    let dim = 384;
    let vectors = e5_like(n + queries, dim, 11);
    let texts = texts(n + queries, 5);
    // The first snapshot comes when the build is done (a finished graph makes one due);
    // none before it.
    let config = Config {
        vector_model: "synthetic@1".into(),
        dim,
        snapshot_after: usize::MAX,
        ..Config::default()
    };
    let mem0 = memory_bytes();
    let mut engine = Engine::new(MemoryStore::new(), config.clone());
    let day = 86_400_000i64;
    let t0 = 1_700_000_000_000i64;
    let start = clock();
    for i in 0..n {
        let e = Episode::new(texts[i].clone(), t0 + (i as i64) * (365 * day / n.max(1) as i64));
        engine.remember("bench", e, Some(&vectors[i])).expect("synthetic episodes are valid");
    }
    let ingest_ms = clock() - start;
    // The build in calls of the default budget, as a host's idle timer or alarm makes them.
    let (mut calls, mut longest, mut build_ms, mut snapshot_ms) = (0, 0f64, 0f64, 0f64);
    let mut longest_snapshot = 0f64;
    let mut snapshot_bytes = 0;
    let segments = loop {
        let start = clock();
        let r = engine.maintain(true, Some(mnemo::engine::MAINTAIN_BUDGET)).expect("maintain");
        let ms = clock() - start;
        calls += 1;
        longest = longest.max(ms);
        // Calls that wrote snapshot bytes (segment parts written ahead, or the head's call).
        if r.snapshot_bytes > 0 {
            snapshot_ms += ms;
            longest_snapshot = longest_snapshot.max(ms);
            snapshot_bytes += r.snapshot_bytes;
        } else {
            build_ms += ms;
        }
        if r.done {
            break r.segments;
        }
    };
    let mem1 = memory_bytes();
    let now = t0 + 366 * day;
    let run = |engine: &mut Engine<MemoryStore>, count: usize, clock: &mut dyn FnMut() -> f64| {
        let mut lat = Vec::with_capacity(count);
        for q in 0..count {
            let mut query = Query::new(texts[n + q].clone(), 10);
            query.vector = Some(vectors[n + q].clone());
            query.touch = false;
            let start = clock();
            let r = engine.recall("bench", &query, now).expect("recall");
            lat.push(clock() - start);
            assert!(!r.hits.is_empty(), "a recall over a full store found nothing");
        }
        lat
    };
    let mut warm = run(&mut engine, queries, clock);
    let store = engine.into_store();
    let start = clock();
    let mut reopened = Engine::new(store, config.clone());
    reopened.load("bench").expect("load");
    let open_ms = clock() - start;
    assert!(
        matches!(reopened.opened("bench"), Some(Opened::Snapshot { replayed: 0, .. })),
        "opened from the snapshot: {:?}",
        reopened.opened("bench")
    );
    let mut cold = run(&mut reopened, queries.min(50), clock);
    let engine_mb = reopened.memory() as f64 / 1e6;
    // The same store without its snapshot: every index rebuilt from the records.
    let mut store = reopened.into_store();
    let mut drop_head = Batch::new();
    drop_head.delete(Namespace::new("bench").expect("valid").key(Table::Snapshot, b"head"));
    store.write(&drop_head).expect("memory store write");
    let start = clock();
    let mut rebuilt = Engine::new(store, config);
    rebuilt.load("bench").expect("load");
    let rebuild_ms = clock() - start;
    assert_eq!(rebuilt.opened("bench"), Some(&Opened::Rebuilt { reason: None }));
    StoreReport {
        n,
        ingest_per_s: n as f64 / (ingest_ms / 1e3),
        index_build_s: build_ms / 1e3,
        segments,
        maintain_calls: calls,
        longest_maintain_ms: longest,
        longest_snapshot_call_ms: longest_snapshot,
        recall_p50_ms: pct(&mut warm, 0.5),
        recall_p99_ms: pct(&mut warm, 0.99),
        snapshot_write_ms: snapshot_ms,
        snapshot_mb: snapshot_bytes as f64 / 1e6,
        cold_open_ms: open_ms,
        rebuild_open_ms: rebuild_ms,
        recall_after_open_p50_ms: pct(&mut cold, 0.5),
        engine_estimate_mb: engine_mb,
        memory_growth_mb: mem1.saturating_sub(mem0) as f64 / 1e6,
    }
}

/// A store that counts what is written to it: records put or deleted, and bytes (keys and
/// values), over every batch since it was made.
pub struct CountingStore<S> {
    /// The store written through.
    pub inner: S,
    /// Batches written.
    pub batches: u64,
    /// Operations (puts and deletes) written.
    pub ops: u64,
    /// Bytes of keys and values written.
    pub bytes: u64,
}

impl<S> CountingStore<S> {
    /// Counts writes to `inner`.
    pub fn new(inner: S) -> Self {
        Self { inner, batches: 0, ops: 0, bytes: 0 }
    }
}

impl<S: KvStore> KvStore for CountingStore<S> {
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
        self.batches += 1;
        for op in batch.ops() {
            self.ops += 1;
            self.bytes += match op {
                mnemo::store::Op::Put(k, v) => (k.len() + v.len()) as u64,
                mnemo::store::Op::Delete(k) => k.len() as u64,
            };
        }
        Ok(())
    }
}

/// What [`writes`] measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WritesReport {
    /// Episodes in the namespace before the changes.
    pub n: usize,
    /// Touching recalls measured.
    pub recalls: usize,
    /// Records written per recall (mean).
    pub recall_records: f64,
    /// Bytes written per recall (mean), keys included.
    pub recall_bytes: f64,
    /// Changes measured (new episodes with their vectors).
    pub changes: usize,
    /// Bytes of a change's own batch (mean): its episode, vector and namespace records.
    pub change_own_bytes: f64,
    /// Bytes written per change (mean), with every `maintain` call (one per 100 changes) and
    /// the snapshots they wrote.
    pub change_bytes: f64,
    /// `change_bytes / change_own_bytes`: what maintenance multiplies a change's writes by.
    pub amplification: f64,
    /// Snapshots written during the changes.
    pub snapshots: usize,
}

/// Bytes written by reads and by changes: a namespace of `n` synthetic episodes (indexed and
/// snapshotted) answers `recalls` touching recalls, then takes `changes` new episodes with
/// `maintain` every 100 changes, as a host's idle step would run it.
pub fn writes(n: usize, recalls: usize, changes: usize) -> WritesReport {
    let dim = 384;
    let vectors = e5_like(n + recalls + changes, dim, 13);
    let texts = texts(n + recalls + changes, 7);
    let config = Config { vector_model: "synthetic@1".into(), dim, ..Config::default() };
    let mut engine = Engine::new(CountingStore::new(MemoryStore::new()), config);
    let (day, t0) = (86_400_000i64, 1_700_000_000_000i64);
    let at = |i: usize| t0 + (i as i64) * (365 * day / (n + changes).max(1) as i64);
    for i in 0..n {
        let e = Episode::new(texts[i].clone(), at(i));
        engine.remember("bench", e, Some(&vectors[i])).expect("synthetic episodes are valid");
    }
    engine.maintain(true, None).expect("maintain on a memory store");
    engine.snapshot("bench").expect("snapshot on a memory store");
    let before = (engine.store().ops, engine.store().bytes);
    for q in 0..recalls {
        let mut query = Query::new(texts[q].clone(), 10);
        query.vector = Some(vectors[q].clone());
        engine.recall("bench", &query, at(n) + q as i64 * 1000).expect("recall");
    }
    let s = engine.store();
    let per_recall = |x: u64, y: u64| (x - y) as f64 / recalls.max(1) as f64;
    let (recall_records, recall_bytes) =
        (per_recall(s.ops, before.0), per_recall(s.bytes, before.1));
    let (mut own, mut total, mut snapshots) = (0u64, 0u64, 0usize);
    for c in 0..changes {
        let i = n + recalls + c;
        let e = Episode::new(texts[i].clone(), at(n + c) + 3_600_000);
        let b = engine.store().bytes;
        engine.remember("bench", e, Some(&vectors[i])).expect("synthetic episodes are valid");
        own += engine.store().bytes - b;
        if (c + 1) % 100 == 0 {
            snapshots +=
                engine.maintain(false, None).expect("maintain on a memory store").snapshots;
        }
    }
    total += engine.store().bytes - before.1 - (recall_bytes * recalls as f64) as u64;
    let change_own_bytes = own as f64 / changes.max(1) as f64;
    let change_bytes = total as f64 / changes.max(1) as f64;
    WritesReport {
        n,
        recalls,
        recall_records,
        recall_bytes,
        changes,
        change_own_bytes,
        change_bytes,
        amplification: change_bytes / change_own_bytes.max(1.0),
        snapshots,
    }
}

/// What [`nightly`] measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NightlyReport {
    /// Days of the mail-agent trace.
    pub days: u32,
    /// Signals stored.
    pub signals: usize,
    /// Milliseconds to check and store them (one batch each).
    pub ingest_ms: f64,
    /// Milliseconds of one nightly run over the last 30 days (no embedder: near-duplicates
    /// by pattern only).
    pub nightly_ms: f64,
    /// Its work units (records read or written).
    pub work: u64,
    /// Observations it wrote.
    pub observations: usize,
    /// Memory held after the run minus before it, MB (native: resident set; wasm: linear
    /// memory, which only grows, so this is the run's peak).
    pub memory_growth_mb: f64,
    /// A hash of every key and value in the store afterwards: equal natively and in wasm when
    /// both builds learn the same thing, bit for bit.
    pub digest: String,
}

/// The nightly job over `days` of the seeded mail-agent trace at `per_day` signals a weekday
/// (`mnemo::demo::trace`): the signals are stored, then one nightly run is timed.
pub fn nightly(days: u32, per_day: u32, clock: &mut dyn FnMut() -> f64) -> NightlyReport {
    let lines: Vec<String> =
        mnemo::demo::trace::trace(1, days, per_day).iter().map(|v| v.to_string()).collect();
    let mut engine = Engine::new(MemoryStore::new(), Config::default());
    let start = clock();
    for l in &lines {
        engine.signal_json("bench", l).expect("the trace's signals are valid");
    }
    let ingest_ms = clock() - start;
    let night = mnemo::time::days_from_civil(2024, 3, 4) * 86_400_000
        + i64::from(days) * 86_400_000
        + 2 * 3_600_000;
    let mem0 = memory_bytes();
    let start = clock();
    let r = engine.nightly("bench", night, None).expect("the nightly job runs");
    let nightly_ms = clock() - start;
    NightlyReport {
        days,
        signals: lines.len(),
        ingest_ms,
        nightly_ms,
        work: r.work,
        observations: r.inserted.len(),
        memory_growth_mb: memory_bytes().saturating_sub(mem0) as f64 / 1e6,
        digest: store_digest(engine.store()),
    }
}

/// The first 8 bytes of the SHA-256 of every key and value the store holds, length-prefixed,
/// in key order: equal digests mean equal stores (native and wasm runs compare them).
fn store_digest(store: &MemoryStore) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for (k, v) in store.scan(b"", None, usize::MAX).expect("a memory store scans") {
        h.update((k.len() as u32).to_le_bytes());
        h.update(&k);
        h.update((v.len() as u32).to_le_bytes());
        h.update(&v);
    }
    let d = h.finalize();
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// What [`compaction`] measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompactionReport {
    /// Raw episodes stored (a year of history).
    pub episodes: usize,
    /// Milliseconds to store them (host vectors, one batch each).
    pub ingest_ms: f64,
    /// Milliseconds of one nightly run with compaction and consolidation, a year after the
    /// first episode.
    pub nightly_ms: f64,
    /// Its work units (records read or written).
    pub work: u64,
    /// Weekly summaries written.
    pub weekly: usize,
    /// Monthly overviews written.
    pub monthly: usize,
    /// Raw episodes per weekly summary.
    pub tier1_ratio: f64,
    /// Raw episodes per monthly overview.
    pub tier2_ratio: f64,
    /// Records a recall can return, before and after the run.
    pub retrievable_before: u64,
    /// After.
    pub retrievable_after: u64,
    /// Memory held after the run minus before it, MB (native: resident set; wasm: linear
    /// memory, which only grows, so this is the run's peak).
    pub memory_growth_mb: f64,
    /// A hash of every key and value in the store afterwards (equal natively and in wasm).
    pub digest: String,
}

/// A year of agent history: `n` episodes of 8 agents × `n / 2000` contacts (at least one: about
/// 250 episodes a year, 5 a week, per agent and contact), one in 40 a failure with a
/// verdict (half of those repeating one of 20 lessons on its situation), the rest routine
/// successes and notes, with E5-shaped host vectors; then one nightly run at the year's end.
pub fn compaction(n: usize, clock: &mut dyn FnMut() -> f64) -> CompactionReport {
    let config = Config { vector_model: "synthetic@1".into(), dim: 384, ..Config::default() };
    let mut engine = Engine::new(MemoryStore::new(), config);
    let vectors = e5_like_portable(n, 384, 11);
    let words = texts(n, 12);
    let start = mnemo::time::days_from_civil(2025, 1, 6) * mnemo::time::DAY;
    let span = 365 * mnemo::time::DAY;
    let mut rng = Rng::new(13);
    let contacts = (n / 2000).max(1) as u64;
    let t = clock();
    for (i, (v, text)) in vectors.iter().zip(&words).enumerate() {
        let at = start + (i as i64 * span) / n.max(1) as i64;
        let mut e = Episode::new(format!("{text} #{i}"), at);
        e.agent = format!("agent{}", rng.next_u64() % 8);
        e.entities = vec![format!("contact{}", rng.next_u64() % contacts)];
        e.kind = "tool_call".into();
        e.situation.tool = format!("tool{}", rng.next_u64() % 12);
        match rng.next_u64() % 40 {
            0 => {
                let lesson = rng.next_u64() % 20;
                e.outcome = mnemo::record::Outcome::Failure;
                e.situation.error_class = format!("class{lesson}");
                e.verdict = format!("lesson {lesson}: check the input first");
            }
            1..=24 => e.outcome = mnemo::record::Outcome::Success,
            _ => {}
        }
        engine.remember("bench", e, Some(v)).expect("a valid episode");
    }
    let ingest_ms = clock() - t;
    let now = start + span + mnemo::time::DAY;
    let before = engine.stats("bench", now).expect("stats").retrievable;
    let mem0 = memory_bytes();
    let t = clock();
    let r = engine.nightly("bench", now, None).expect("the nightly job runs");
    let nightly_ms = clock() - t;
    let memory_growth_mb = memory_bytes().saturating_sub(mem0) as f64 / 1e6;
    let after = engine.stats("bench", now).expect("stats").retrievable;
    let weekly: Vec<_> = r.compacted.iter().filter(|c| c.tier == 1).collect();
    let monthly: Vec<_> = r.compacted.iter().filter(|c| c.tier == 2).collect();
    let raw: usize = weekly.iter().map(|c| c.sources.len()).sum();
    let tier1_ratio = raw as f64 / weekly.len().max(1) as f64;
    let weeks: usize = monthly.iter().map(|c| c.sources.len()).sum();
    CompactionReport {
        episodes: n,
        ingest_ms,
        nightly_ms,
        work: r.work,
        weekly: weekly.len(),
        monthly: monthly.len(),
        tier1_ratio,
        tier2_ratio: weeks as f64 / monthly.len().max(1) as f64 * tier1_ratio,
        retrievable_before: before,
        retrievable_after: after,
        memory_growth_mb,
        digest: store_digest(engine.store()),
    }
}

/// What [`context`] measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ContextReport {
    /// Episodes in the namespace.
    pub episodes: usize,
    /// Tasks assembled (and recalls run, the peer).
    pub queries: usize,
    /// `Engine::context` with default caps and automatic disclosure, host vectors (so no
    /// embedding), median and 99th percentile, ms.
    pub context_p50_ms: f64,
    /// 99th percentile.
    pub context_p99_ms: f64,
    /// A plain `recall` of the top 10 for the same task and vector, median, ms.
    pub recall_p50_ms: f64,
    /// 99th percentile.
    pub recall_p99_ms: f64,
    /// Mean tokens of the assembled contexts.
    pub mean_tokens: f64,
    /// Mean items withheld per context.
    pub mean_withheld: f64,
}

/// The context workload's namespace: `n` synthetic episodes (host vectors, HNSW built), 12
/// active rules and 40 facts; with `queries` query texts and vectors after them and the time to
/// ask at. Shared by [`context`] and the wasm build's measure of how answers cross into JS.
pub struct ContextSetup {
    /// The engine, namespace `bench`.
    pub engine: Engine<MemoryStore>,
    /// Query texts.
    pub texts: Vec<String>,
    /// Their vectors.
    pub vectors: Vec<Vec<f32>>,
    /// When to ask (ms).
    pub now: i64,
}

/// Builds [`ContextSetup`].
pub fn context_setup(n: usize, queries: usize) -> ContextSetup {
    let dim = 384;
    let vectors = e5_like(n + queries, dim, 11);
    let texts = texts(n + queries, 5);
    let config = Config { vector_model: "synthetic@1".into(), dim, ..Config::default() };
    let mut engine = Engine::new(MemoryStore::new(), config);
    let day = 86_400_000i64;
    let t0 = 1_700_000_000_000i64;
    for i in 0..n {
        let e = Episode::new(texts[i].clone(), t0 + (i as i64) * (365 * day / n.max(1) as i64));
        engine.remember("bench", e, Some(&vectors[i])).expect("synthetic episodes are valid");
    }
    engine.maintain(true, None).expect("maintain on a memory store");
    let user = mnemo::record::Origin::User;
    for i in 0..12 {
        let text = format!("Rule {i}: {}", texts[i * 7]);
        engine
            .add_rule("bench", &text, "", mnemo::record::RuleStatus::Active, user, t0)
            .expect("rule");
    }
    for i in 0..40 {
        let mut f = mnemo::engine::FactInput::new(format!("fact_{i}"), texts[i * 3 + 1].clone());
        f.origin = user;
        if i % 3 == 0 {
            f.policy = mnemo::record::Policy::Sensitive;
        }
        engine.write_fact("bench", &f, t0).expect("fact");
    }
    ContextSetup {
        engine,
        texts: texts[n..].to_vec(),
        vectors: vectors[n..].to_vec(),
        now: t0 + 366 * day,
    }
}

/// `n` synthetic episodes (as [`store`]: E5-shaped host vectors, indexes built), 12 rules a
/// person wrote and 40 facts (a third sensitive), then `queries` tasks: each assembled into a
/// context at default caps, and recalled plainly as the peer, with the same vector.
pub fn context(n: usize, queries: usize, clock: &mut dyn FnMut() -> f64) -> ContextReport {
    let ContextSetup { mut engine, texts, vectors, now } = context_setup(n, queries);
    let (mut ctx, mut rec) = (Vec::with_capacity(queries), Vec::with_capacity(queries));
    let (mut tokens, mut withheld) = (0usize, 0usize);
    for q in 0..queries {
        let mut req = mnemo::engine::ContextRequest::new(texts[q].clone());
        req.vector = Some(vectors[q].clone());
        let start = clock();
        let c = engine.context("bench", &req, now).expect("context");
        ctx.push(clock() - start);
        tokens += c.tokens.total;
        withheld += c.withheld.len();
        let mut query = Query::new(texts[q].clone(), 10);
        query.vector = Some(vectors[q].clone());
        query.touch = false;
        let start = clock();
        engine.recall("bench", &query, now).expect("recall");
        rec.push(clock() - start);
    }
    ContextReport {
        episodes: n,
        queries,
        context_p50_ms: pct(&mut ctx, 0.5),
        context_p99_ms: pct(&mut ctx, 0.99),
        recall_p50_ms: pct(&mut rec, 0.5),
        recall_p99_ms: pct(&mut rec, 0.99),
        mean_tokens: tokens as f64 / queries.max(1) as f64,
        mean_withheld: withheld as f64 / queries.max(1) as f64,
    }
}
