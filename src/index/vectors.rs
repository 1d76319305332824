//! The vector index: sealed HNSW segments plus an exact delta segment for recent writes.
//!
//! New vectors go to the **delta**, which every query scans exactly: a recent item can never
//! be missed by the approximate search. [`VectorIndex::maintain`] (the "background step": the
//! host calls it when idle, e.g. from a timer or a Durable Object alarm) seals the delta into
//! an HNSW segment ([`super::hnsw`]) and merges segments of similar size, so a namespace holds
//! O(log n) segments. Removing an id tombstones it; tombstones are dropped at the next merge.
//!
//! **Builds are sliced.** A seal or a merge is a *build job* that inserts its rows into a new
//! graph one at a time; each `maintain` call spends at most about its work budget (distances
//! computed) and the job continues at the next call. Until a job finishes, everything it reads
//! stays searchable where it was: a seal's rows are scanned exactly, a merge's sources keep
//! their graphs. A job lives in memory; a long one's progress can be stored
//! (`index::progress`: the rows it takes and its graph so far) and taken up after a restart,
//! so that a host whose process lives shorter than a large seal or merge still finishes it.
//! Without stored progress a restart starts the job again from its rows, which the snapshot
//! and the records hold.
//!
//! Vectors are held as int8 with one scale per vector ([`QVec`], 4× smaller than f32). The
//! graph uses int8·int8 distances; the scores returned are the f32 query against the int8
//! vector, which stays within ~1e-3 of the f32 cosine.

use std::cell::RefCell;

use super::hnsw::{level_of, Graph, Visited};
use super::id_map::IdMap;
use super::row_seqs::RowSeqs;

/// A unit vector quantised to int8 with one scale.
#[derive(Debug, Clone, PartialEq)]
pub struct QVec {
    pub(super) scale: f32,
    pub(super) data: Box<[i8]>,
}

impl QVec {
    /// Quantises `v` (expected unit length) symmetrically: `v[i] ≈ scale · data[i]`.
    pub fn new(v: &[f32]) -> Self {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        let data = v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect();
        Self { scale, data }
    }

    /// Dot product with an f32 query (the cosine when both are unit vectors).
    pub fn dot_f32(&self, q: &[f32]) -> f32 {
        dot_i8_f32(&self.data, q) * self.scale
    }

    /// Dot product of two quantised vectors.
    pub fn dot(&self, other: &QVec) -> f32 {
        dot_i8(&self.data, &other.data) as f32 * self.scale * other.scale
    }
}

/// The dot product of an int8 row and an f32 query: eight running sums (lane `i` takes
/// elements `i`, `i + 8`, …), added up in lane order, then the tail. The wasm kernel does the
/// same multiplications and additions in the same order in two f32x4 registers, so its result
/// has the same bits; written portably it compiled to lane-by-lane code 3.6× slower.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn dot_i8_f32(a: &[i8], q: &[f32]) -> f32 {
    use core::arch::wasm32::{f32x4, f32x4_add, f32x4_extract_lane, f32x4_mul, f32x4_splat, v128};
    let lane = |x: v128| {
        [
            f32x4_extract_lane::<0>(x),
            f32x4_extract_lane::<1>(x),
            f32x4_extract_lane::<2>(x),
            f32x4_extract_lane::<3>(x),
        ]
    };
    let (mut lo, mut hi) = (f32x4_splat(0.0), f32x4_splat(0.0));
    let (mut ca, mut cq) = (a.chunks_exact(8), q.chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cq) {
        let f = |i: usize| f32::from(x[i]);
        lo = f32x4_add(lo, f32x4_mul(f32x4(f(0), f(1), f(2), f(3)), f32x4(y[0], y[1], y[2], y[3])));
        hi = f32x4_add(hi, f32x4_mul(f32x4(f(4), f(5), f(6), f(7)), f32x4(y[4], y[5], y[6], y[7])));
    }
    let (l, h) = (lane(lo), lane(hi));
    let acc = [l[0], l[1], l[2], l[3], h[0], h[1], h[2], h[3]];
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in ca.remainder().iter().zip(cq.remainder()) {
        sum += f32::from(*x) * *y;
    }
    sum
}

/// The dot product of an int8 row and an f32 query (see the wasm kernel above for the order).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn dot_i8_f32(a: &[i8], q: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    for (a, b) in a.chunks_exact(8).zip(q.chunks_exact(8)) {
        for i in 0..8 {
            acc[i] += f32::from(a[i]) * b[i];
        }
    }
    let tail = a.len() / 8 * 8;
    let mut sum: f32 = acc.iter().sum();
    for i in tail..a.len().min(q.len()) {
        sum += f32::from(a[i]) * q[i];
    }
    sum
}

/// The integer dot product of two int8 rows. Integer sums are exact, so every kernel below gives
/// the same result whatever its order of summation.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    use core::arch::wasm32::{
        i16x8_extend_high_i8x16, i16x8_extend_low_i8x16, i32x4_add, i32x4_dot_i16x8,
        i32x4_extract_lane, i32x4_splat, i8x16, v128,
    };
    // wasm's `i32x4.dot_i16x8_s` multiplies eight i16 pairs and adds neighbours into four i32
    // lanes; written portably, the loop below compiles to lane shuffles at half the speed.
    let load = |c: &[i8]| -> v128 {
        i8x16(
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13],
            c[14], c[15],
        )
    };
    let mut acc = i32x4_splat(0);
    let (mut ca, mut cb) = (a.chunks_exact(16), b.chunks_exact(16));
    for (x, y) in (&mut ca).zip(&mut cb) {
        let (x, y) = (load(x), load(y));
        let lo = i32x4_dot_i16x8(i16x8_extend_low_i8x16(x), i16x8_extend_low_i8x16(y));
        let hi = i32x4_dot_i16x8(i16x8_extend_high_i8x16(x), i16x8_extend_high_i8x16(y));
        acc = i32x4_add(acc, i32x4_add(lo, hi));
    }
    let lanes = i32x4_extract_lane::<0>(acc)
        + i32x4_extract_lane::<1>(acc)
        + i32x4_extract_lane::<2>(acc)
        + i32x4_extract_lane::<3>(acc);
    let tail: i32 =
        ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
    lanes + tail
}

/// The integer dot product of two int8 rows (natively the compiler vectorises this loop well:
/// `pmaddwd` on x86).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    for (a, b) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        for i in 0..16 {
            acc[i] += i32::from(a[i]) * i32::from(b[i]);
        }
    }
    let tail = a.len() / 16 * 16;
    let mut sum: i32 = acc.iter().sum();
    for i in tail..a.len().min(b.len()) {
        sum += i32::from(a[i]) * i32::from(b[i]);
    }
    sum
}

/// A segment's vectors, contiguous: row `r` is `data[r·dim..(r+1)·dim]` × `scales[r]`.
#[derive(Debug)]
pub(super) struct Flat {
    pub(super) dim: usize,
    pub(super) ids: Vec<u64>,
    pub(super) scales: Vec<f32>,
    pub(super) data: Vec<i8>,
}

impl Flat {
    pub(super) fn with_capacity(dim: usize, rows: usize) -> Self {
        Self {
            dim,
            ids: Vec::with_capacity(rows),
            scales: Vec::with_capacity(rows),
            data: Vec::with_capacity(rows * dim),
        }
    }
    pub(super) fn push(&mut self, id: u64, scale: f32, row: &[i8]) {
        self.ids.push(id);
        self.scales.push(scale);
        self.data.extend_from_slice(row);
    }
    pub(super) fn row(&self, r: u32) -> &[i8] {
        let r = r as usize;
        &self.data[r * self.dim..(r + 1) * self.dim]
    }
    fn dot_f32(&self, r: u32, q: &[f32]) -> f32 {
        dot_i8_f32(self.row(r), q) * self.scales[r as usize]
    }
    /// The graph's distance between two rows: 1 − their int8 cosine.
    fn distance(&self, a: u32, b: u32) -> f32 {
        1.0 - dot_i8(self.row(a), self.row(b)) as f32
            * self.scales[a as usize]
            * self.scales[b as usize]
    }
    /// The graph's distance between a row and a quantised query.
    fn distance_to(&self, r: u32, q: &QVec) -> f32 {
        1.0 - dot_i8(self.row(r), &q.data) as f32 * self.scales[r as usize] * q.scale
    }
}

/// Tuning of the vector index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorConfig {
    /// Delta size at which [`VectorIndex::maintain`] seals it into an HNSW segment. Below it an
    /// exact scan is as fast as the graph (see BENCHMARKS.md).
    pub seal_at: usize,
    /// HNSW `ef_construction`.
    pub ef_construction: usize,
    /// HNSW `ef_search`: candidates each segment returns per query.
    pub ef_search: usize,
    /// Seed of the graph's level assignment (builds are deterministic given the seed).
    pub seed: u64,
}

impl Default for VectorConfig {
    fn default() -> Self {
        Self { seal_at: 4096, ef_construction: 40, ef_search: 64, seed: 0x006d_6e65_6d6f }
    }
}

pub(super) struct Segment {
    /// Which segment this is, for the life of the index (snapshots store a segment once, under
    /// this number, and drop it when a merge replaces it).
    pub(super) serial: u64,
    pub(super) flat: Flat,
    pub(super) graph: Graph,
    /// Each row's number in the sequence of rows sealed (`index::row_seqs`), by which a
    /// snapshot stores the row once whatever merges the segment goes through.
    pub(super) seqs: RowSeqs,
}

/// Where an id's current vector is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loc {
    Delta(usize),
    /// A row of the seal job in progress (scanned exactly until the job ends).
    Building(u32),
    Sealed(usize, u32),
}

/// A seal or merge in progress: rows `0..graph.len()` of `flat` are in the graph so far.
pub(super) struct Build {
    pub(super) flat: Flat,
    pub(super) graph: Graph,
    /// A merge of the two newest segments (else a seal of the delta, whose rows are `Building`).
    pub(super) merge: bool,
    /// For a merge, where each row came from (a row still there when the job ends moves to the
    /// new segment; any other is a tombstone). Empty for a seal.
    pub(super) from: Vec<Loc>,
    /// For a merge, the seqs of the rows taken, in order (a seal numbers its rows when done).
    pub(super) seqs: RowSeqs,
    /// Work spent since the job began or its progress was last stored (`index::progress`):
    /// what a restart would lose.
    pub(super) unsaved: u64,
}

/// A seal's stored progress, kept until the delta is whole ([`VectorIndex::resume_seal`]).
#[derive(Debug)]
pub(super) struct Stashed {
    pub(super) first_seq: u64,
    pub(super) ids: Vec<u64>,
    pub(super) crc: u32,
    pub(super) graph: Graph,
}

/// HNSW segments + exact delta; ids are the engine's episode ids.
pub struct VectorIndex {
    pub(super) config: VectorConfig,
    pub(super) dim: usize,
    pub(super) segments: Vec<Segment>,
    pub(super) delta: Vec<(u64, QVec)>,
    pub(super) loc: IdMap<Loc>,
    /// The serial the next segment built gets.
    pub(super) next_serial: u64,
    /// The seq the next row sealed gets.
    pub(super) next_seq: u64,
    /// Rows sealed at or past this seq are not stored yet ([`VectorIndex::rows_stored_below`]):
    /// a merge keeps them, tombstones too, so that the rows a snapshot is writing stay put.
    keep_from: u64,
    pub(super) build: Option<Build>,
    /// A seal's stored progress, until the delta it takes its rows from is whole
    /// (`index::progress`).
    pub(super) stashed: Option<Stashed>,
    /// Reused between searches and builds: allocating a visited set the size of a graph per
    /// query costs.
    visited: RefCell<Visited>,
}

/// What [`VectorIndex::maintain`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaintainReport {
    /// Vectors sealed from the delta into a finished segment.
    pub sealed: usize,
    /// Segment merges finished.
    pub merges: usize,
    /// Segments after the step.
    pub segments: usize,
    /// Work spent: distances computed by graph builds.
    pub work: u64,
    /// Nothing is left to do at this `force` (no build in progress, none due); otherwise call
    /// again.
    pub done: bool,
}

impl VectorIndex {
    /// An empty index for vectors of `dim` dimensions.
    pub fn new(dim: usize, config: VectorConfig) -> Self {
        Self {
            config,
            dim,
            segments: Vec::new(),
            delta: Vec::new(),
            loc: IdMap::default(),
            next_serial: 1,
            next_seq: 0,
            keep_from: u64::MAX,
            build: None,
            stashed: None,
            visited: RefCell::new(Visited::default()),
        }
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The index's tuning.
    pub fn config(&self) -> VectorConfig {
        self.config
    }

    /// Live vectors.
    pub fn len(&self) -> usize {
        self.loc.len()
    }

    /// True when no vector is live.
    pub fn is_empty(&self) -> bool {
        self.loc.is_empty()
    }

    /// Vectors scanned exactly: the delta and the rows of a seal in progress.
    pub fn delta_len(&self) -> usize {
        let sealing = self.build.as_ref().filter(|b| !b.merge).map_or(0, |b| b.flat.ids.len());
        self.delta.len() + sealing
    }

    /// Sealed HNSW segments.
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// Adds (or replaces) the vector of `id`. The caller checked its dimension.
    pub fn insert(&mut self, id: u64, v: &[f32]) {
        self.insert_row(id, QVec::new(v));
    }

    /// Adds (or replaces) the vector of `id`, quantised already ([`QVec::new`]).
    pub fn insert_row(&mut self, id: u64, q: QVec) {
        self.remove(id);
        self.loc.insert(id, Loc::Delta(self.delta.len()));
        self.delta.push((id, q));
    }

    /// True when `id` has a live vector.
    pub fn contains(&self, id: u64) -> bool {
        self.loc.contains_key(id)
    }

    /// Removes `id`'s vector (a no-op when absent).
    pub fn remove(&mut self, id: u64) {
        match self.loc.remove(id) {
            Some(Loc::Delta(i)) => {
                self.delta.swap_remove(i);
                if let Some((moved, _)) = self.delta.get(i) {
                    self.loc.insert(*moved, Loc::Delta(i));
                }
            }
            // A sealed or building row stays in its graph as a tombstone until the next merge.
            Some(Loc::Sealed(..) | Loc::Building(_)) | None => {}
        }
    }

    /// True when a build is in progress, or the delta has outgrown twice its limit: a
    /// [`maintain`](Self::maintain) call is overdue.
    pub fn needs_maintenance(&self) -> bool {
        self.build.is_some() || self.delta.len() >= 2 * self.config.seal_at
    }

    /// True when [`maintain`](Self::maintain) at this `force` has a build to continue or start.
    pub fn has_work(&self, force: bool) -> bool {
        self.build.is_some()
            || self.mergeable()
            || (!self.delta.is_empty() && (force || self.delta.len() >= self.config.seal_at))
    }

    /// True when the newest segment is at least half the size of the one before it.
    fn mergeable(&self) -> bool {
        let n = self.segments.len();
        n >= 2 && self.segments[n - 1].flat.ids.len() * 2 >= self.segments[n - 2].flat.ids.len()
    }

    /// The background step, spending about `budget` work units (distances computed; the row
    /// being inserted when the budget runs out is finished; at least one row per call). It
    /// continues the build in progress, else merges the two newest segments when the newer is
    /// at least half the size of the older, else seals the delta when it holds at least
    /// `seal_at` vectors (any, with `force`), and goes on until the budget is spent or nothing
    /// is due.
    pub fn maintain(&mut self, force: bool, budget: u64) -> MaintainReport {
        self.maintain_with(force, budget, |_, _| true)
    }

    /// [`maintain`](Self::maintain), starting a build only when `may_start(rows, serials)`
    /// allows it — the rows the build would take, and the serials of the segments there are
    /// then. A build held back holds back every other (nothing is sealed while a merge is
    /// due), and the report says the work is not done. The engine holds a long build until a
    /// snapshot lists every segment, so that its progress can be stored (`index::progress`).
    pub fn maintain_with(
        &mut self,
        force: bool,
        budget: u64,
        may_start: impl Fn(usize, &[u64]) -> bool,
    ) -> MaintainReport {
        let budget = budget.max(1);
        let mut report = MaintainReport::default();
        while report.work < budget {
            if self.build.is_none() {
                let rows = match self.merge_due() {
                    Some((.., rows)) => rows,
                    None if force || self.delta.len() >= self.config.seal_at => self.delta.len(),
                    None => 0,
                };
                if rows > 0 && !may_start(rows, &self.segment_serials()) {
                    break;
                }
                self.build = self.next_build(force);
            }
            let Some(build) = self.build.as_mut() else { break };
            let Build { flat, graph, unsaved, .. } = build;
            while graph.len() < flat.ids.len() && report.work < budget {
                let level = level_of(self.config.seed, graph.len() as u32);
                let work = graph.insert(
                    level,
                    self.config.ef_construction,
                    &|a, b| flat.distance(a, b),
                    self.visited.get_mut(),
                );
                report.work += work;
                *unsaved += work;
            }
            if graph.len() == flat.ids.len() {
                let build = self.build.take().expect("a build in progress");
                if build.merge {
                    report.merges += 1;
                } else {
                    report.sealed += build.flat.ids.len();
                }
                self.finish(build);
            }
        }
        report.segments = self.segments.len();
        report.done = !self.has_work(force);
        report
    }

    /// The merge due next, if one is: the serials of the two newest segments and the rows
    /// they hold.
    fn merge_due(&self) -> Option<(u64, u64, usize)> {
        let n = self.segments.len();
        if !self.mergeable() {
            return None;
        }
        let (older, newer) = (&self.segments[n - 2], &self.segments[n - 1]);
        Some((older.serial, newer.serial, older.flat.ids.len() + newer.flat.ids.len()))
    }

    /// The build due next, with its rows: a merge of the two newest segments, else a seal.
    fn next_build(&mut self, force: bool) -> Option<Build> {
        let n = self.segments.len();
        if self.mergeable() {
            let rows = self.segments[n - 2].flat.ids.len() + self.segments[n - 1].flat.ids.len();
            let mut flat = Flat::with_capacity(self.dim, rows);
            let mut from = Vec::with_capacity(rows);
            let mut seqs = RowSeqs::default();
            for index in [n - 2, n - 1] {
                let seg = &self.segments[index];
                for ((r, id), seq) in seg.flat.ids.iter().enumerate().zip(seg.seqs.iter()) {
                    let here = Loc::Sealed(index, r as u32);
                    if self.loc.get(*id) == Some(&here) || seq >= self.keep_from {
                        flat.push(*id, seg.flat.scales[r], seg.flat.row(r as u32));
                        from.push(here);
                        seqs.push(seq);
                    }
                }
            }
            let (graph, unsaved) = (Graph::new(), 0);
            return Some(Build { flat, graph, merge: true, from, seqs, unsaved });
        }
        if self.delta.is_empty() || (!force && self.delta.len() < self.config.seal_at) {
            return None;
        }
        let delta = std::mem::take(&mut self.delta);
        let mut flat = Flat::with_capacity(self.dim, delta.len());
        for (r, (id, q)) in delta.into_iter().enumerate() {
            self.loc.insert(id, Loc::Building(r as u32));
            flat.push(id, q.scale, &q.data);
        }
        let (from, seqs, graph) = (Vec::new(), RowSeqs::default(), Graph::new());
        Some(Build { flat, graph, merge: false, from, seqs, unsaved: 0 })
    }

    /// Turns a finished build into a segment: a seal is appended; a merge replaces its two
    /// sources (the newest two segments: nothing else is sealed while a merge runs).
    fn finish(&mut self, build: Build) {
        if build.merge {
            // A live row of the sources the merge did not take (only a damaged stored
            // progress can make one) would point into the replaced segments: drop it.
            let n = self.segments.len();
            let mut taken = build.from.iter().peekable();
            let mut dropped = Vec::new();
            for index in [n - 2, n - 1] {
                for (r, id) in self.segments[index].flat.ids.iter().enumerate() {
                    let here = Loc::Sealed(index, r as u32);
                    if taken.peek() == Some(&&here) {
                        taken.next();
                    } else if self.loc.get(*id) == Some(&here) {
                        dropped.push(*id);
                    }
                }
            }
            for id in dropped {
                self.loc.remove(id);
            }
            self.segments.truncate(n - 2);
        }
        if build.flat.ids.is_empty() {
            return; // a merge of two segments whose rows were all removed
        }
        let index = self.segments.len();
        for (r, id) in build.flat.ids.iter().enumerate() {
            let was = build.from.get(r).copied().unwrap_or(Loc::Building(r as u32));
            if let Some(loc) = self.loc.get_mut(*id).filter(|l| **l == was) {
                *loc = Loc::Sealed(index, r as u32);
            }
        }
        let serial = self.next_serial;
        self.next_serial += 1;
        let seqs = if build.merge {
            build.seqs
        } else {
            let rows = build.flat.ids.len();
            self.next_seq += rows as u64;
            RowSeqs::span(self.next_seq - rows as u64, rows)
        };
        let mut graph = build.graph;
        graph.pack();
        self.segments.push(Segment { serial, flat: build.flat, graph, seqs });
    }

    /// Tells the index that the rows sealed below seq `seq` are stored (a snapshot's rows
    /// parts hold them) and the others not yet: until they are, merges keep every row at or
    /// past `seq`, removed ones too, so that the bytes of a rows part being written a slice at
    /// a time do not change under it. `u64::MAX` (the default): merges drop every removed row.
    pub fn rows_stored_below(&mut self, seq: u64) {
        self.keep_from = seq;
    }

    /// The seq the next row sealed gets: the rows sealed so far are numbered below it.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Numbers the rows sealed from now on from `seq` at least (a loaded index whose stored
    /// rows reach past its segments': those seqs are taken).
    pub(crate) fn number_rows_from(&mut self, seq: u64) {
        self.next_seq = self.next_seq.max(seq);
    }

    /// Rows in sealed segments, removed ones included.
    pub(crate) fn sealed_rows(&self) -> usize {
        self.segments.iter().map(|s| s.flat.ids.len()).sum()
    }

    /// The serial numbers of the sealed segments, in search order.
    pub fn segment_serials(&self) -> Vec<u64> {
        self.segments.iter().map(|s| s.serial).collect()
    }

    /// The `k` nearest live vectors to the unit vector `query` among ids `keep` accepts, as
    /// (id, cosine), best first. The delta (and a seal in progress) is scanned exactly; each
    /// segment returns its `ef_search` graph neighbours, filtered afterwards.
    pub fn search(&self, query: &[f32], k: usize, keep: impl Fn(u64) -> bool) -> Vec<(u64, f32)> {
        let mut hits = self.scan_delta(query, &keep);
        if !self.segments.is_empty() {
            let q = QVec::new(query);
            let mut visited = self.visited.borrow_mut();
            for (index, seg) in self.segments.iter().enumerate() {
                let flat = &seg.flat;
                let near = seg.graph.search(
                    self.config.ef_search,
                    &mut |r| flat.distance_to(r, &q),
                    &mut visited,
                );
                for n in near {
                    let id = flat.ids[n.row as usize];
                    if self.loc.get(id) == Some(&Loc::Sealed(index, n.row)) && keep(id) {
                        hits.push((id, flat.dot_f32(n.row, query)));
                    }
                }
            }
        }
        top_k(hits, k)
    }

    /// Exact cosine of every live vector `keep` accepts (the ground truth for recall tests,
    /// and the path for small filtered sets).
    pub fn exact(&self, query: &[f32], k: usize, keep: impl Fn(u64) -> bool) -> Vec<(u64, f32)> {
        let mut hits = self.scan_delta(query, &keep);
        for (index, seg) in self.segments.iter().enumerate() {
            for (r, id) in seg.flat.ids.iter().enumerate() {
                let r = r as u32;
                if self.loc.get(*id) == Some(&Loc::Sealed(index, r)) && keep(*id) {
                    hits.push((*id, seg.flat.dot_f32(r, query)));
                }
            }
        }
        top_k(hits, k)
    }

    /// Exact cosines of the delta's vectors, and of a seal in progress, that `keep` accepts.
    fn scan_delta(&self, query: &[f32], keep: &impl Fn(u64) -> bool) -> Vec<(u64, f32)> {
        let mut hits: Vec<(u64, f32)> = self
            .delta
            .iter()
            .filter(|(id, _)| keep(*id))
            .map(|(id, v)| (*id, v.dot_f32(query)))
            .collect();
        if let Some(b) = self.build.as_ref().filter(|b| !b.merge) {
            for (r, id) in b.flat.ids.iter().enumerate() {
                let r = r as u32;
                if self.loc.get(*id) == Some(&Loc::Building(r)) && keep(*id) {
                    hits.push((*id, b.flat.dot_f32(r, query)));
                }
            }
        }
        hits
    }

    /// The rows a snapshot must store outside the segments: the delta's and a seal's in
    /// progress, as (id, scale, row).
    pub(super) fn unsealed(&self) -> impl Iterator<Item = (u64, f32, &[i8])> + '_ {
        let delta = self.delta.iter().map(|(id, q)| (*id, q.scale, &q.data[..]));
        let building = self.build.iter().filter(|b| !b.merge).flat_map(move |b| {
            b.flat.ids.iter().enumerate().filter_map(move |(r, id)| {
                let r = r as u32;
                (self.loc.get(*id) == Some(&Loc::Building(r)))
                    .then(|| (*id, b.flat.scales[r as usize], b.flat.row(r)))
            })
        });
        delta.chain(building)
    }

    /// The ids of the unsealed rows (the delta's, then a seal's in progress), in that order.
    pub fn unsealed_ids(&self) -> Vec<u64> {
        self.unsealed().map(|(id, ..)| id).collect()
    }

    /// The cosine of one id's vector with `query`, if it is live.
    pub fn score(&self, id: u64, query: &[f32]) -> Option<f32> {
        let (scale, row) = self.row(id)?;
        Some(dot_i8_f32(row, query) * scale)
    }

    /// The cosine of two live ids' vectors.
    pub fn pair(&self, a: u64, b: u64) -> Option<f32> {
        Some(Self::pair_rows(self.row(a)?, self.row(b)?))
    }

    /// A live id's int8 row and its scale, for comparing many pairs ([`VectorIndex::pair_rows`])
    /// without looking each id up again.
    pub fn row_of(&self, id: u64) -> Option<(f32, &[i8])> {
        self.row(id)
    }

    /// The cosine of two rows from [`VectorIndex::row_of`] (what [`VectorIndex::pair`] gives).
    pub fn pair_rows((sa, ra): (f32, &[i8]), (sb, rb): (f32, &[i8])) -> f32 {
        dot_i8(ra, rb) as f32 * sa * sb
    }

    fn row(&self, id: u64) -> Option<(f32, &[i8])> {
        match *self.loc.get(id)? {
            Loc::Delta(i) => Some((self.delta[i].1.scale, &self.delta[i].1.data)),
            Loc::Building(r) => {
                let f = &self.build.as_ref()?.flat;
                Some((f.scales[r as usize], f.row(r)))
            }
            Loc::Sealed(s, r) => {
                let f = &self.segments[s].flat;
                Some((f.scales[r as usize], f.row(r)))
            }
        }
    }

    /// Approximate bytes held: vectors, graph links, and the id map.
    pub fn memory(&self) -> usize {
        let delta = self.delta.len() * (self.dim + 8 + 8 + 16);
        let flat = |f: &Flat| f.ids.len() * (self.dim + 4 + 8);
        let sealed: usize =
            self.segments.iter().map(|s| flat(&s.flat) + s.graph.memory() + s.seqs.memory()).sum();
        let build = self.build.as_ref().map_or(0, |b| flat(&b.flat) + b.graph.memory());
        delta + sealed + build + self.loc.memory()
    }
}

fn top_k(mut hits: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.dedup_by_key(|h| h.0);
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::test_vectors::unit;

    #[test]
    fn the_integer_dot_kernel_is_the_exact_sum() {
        for len in (0..40).chain([383, 384, 385]) {
            for seed in 0..4u64 {
                let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                let mut next = || {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    // Extremes often: products of ±127 must add up exactly.
                    match s % 4 {
                        0 => -127,
                        1 => 127,
                        _ => (((s >> 8) % 255) as i32 - 127) as i8,
                    }
                };
                let (a, b): (Vec<i8>, Vec<i8>) = (0..len).map(|_| (next(), next())).unzip();
                let naive: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
                assert_eq!(dot_i8(&a, &b), naive, "length {len}");
            }
        }
    }

    #[test]
    fn quantised_dot_is_close_to_f32() {
        for s in 0..50 {
            let (a, b) = (unit(s, 384), unit(s + 1000, 384));
            let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((QVec::new(&a).dot_f32(&b) - exact).abs() < 2e-3);
            assert!((QVec::new(&a).dot(&QVec::new(&b)) - exact).abs() < 4e-3);
        }
    }

    #[test]
    fn a_merge_of_segments_whose_rows_were_all_removed_ends() {
        let config = VectorConfig { seal_at: 8, ..VectorConfig::default() };
        let mut idx = VectorIndex::new(8, config);
        for i in 0..16 {
            idx.insert(i, &unit(i, 8));
            if i == 7 || i == 15 {
                // Seal the 8 in one-row slices; the call that finishes the seal has spent its
                // budget, so the merge of the two segments is not started yet.
                idx.maintain(false, 1);
                while idx.build.as_ref().is_some_and(|b| !b.merge) {
                    idx.maintain(false, 1);
                }
            }
        }
        assert_eq!((idx.segment_count(), idx.build.is_none()), (2, true));
        for i in 0..16 {
            idx.remove(i);
        }
        let report = idx.maintain(false, u64::MAX);
        assert!(report.done, "{report:?}");
        assert_eq!((idx.segment_count(), idx.len()), (0, 0));
        assert!(idx.maintain(true, 0).done, "a zero budget still ends");
    }

    #[test]
    fn a_merge_keeps_removed_rows_not_stored_yet_and_drops_stored_ones() {
        let config = VectorConfig { seal_at: 8, ..VectorConfig::default() };
        let mut idx = VectorIndex::new(8, config);
        idx.rows_stored_below(0);
        let fill = |idx: &mut VectorIndex, ids: std::ops::Range<u64>| {
            for i in ids {
                idx.insert(i, &unit(i, 8));
            }
            idx.maintain(true, u64::MAX);
        };
        fill(&mut idx, 0..8);
        idx.remove(3);
        fill(&mut idx, 8..16); // sealed, then merged with the first segment
        assert_eq!(idx.segment_count(), 1);
        let seg = &idx.segments[0];
        assert_eq!(seg.flat.ids.len(), 16, "the removed row is kept: its seq is not stored");
        assert_eq!(seg.seqs, RowSeqs::span(0, 16));
        assert_eq!(idx.len(), 15);
        assert!(idx.search(&unit(3, 8), 16, |_| true).iter().all(|h| h.0 != 3));

        idx.rows_stored_below(16);
        idx.remove(4);
        fill(&mut idx, 16..32);
        let seg = &idx.segments[0];
        assert_eq!(seg.flat.ids.len(), 30, "stored removed rows are dropped");
        assert_eq!(seg.seqs.runs(), &[(0, 3), (5, 27)]);
        assert_eq!(idx.next_seq(), 32);
        assert_eq!(idx.search(&unit(20, 8), 1, |_| true)[0].0, 20);
    }

    #[test]
    fn recent_writes_are_found_exactly_and_removals_hide_ids() {
        let config = VectorConfig { seal_at: 64, ..VectorConfig::default() };
        let mut idx = VectorIndex::new(32, config);
        for i in 0..300 {
            idx.insert(i, &unit(i, 32));
            if idx.needs_maintenance() {
                idx.maintain(false, u64::MAX);
            }
        }
        idx.maintain(true, u64::MAX);
        assert_eq!(idx.delta_len(), 0);
        assert!(idx.segment_count() <= 4, "{} segments", idx.segment_count());
        idx.insert(1000, &unit(1000, 32));
        assert_eq!(idx.search(&unit(1000, 32), 1, |_| true)[0].0, 1000);
        idx.remove(5);
        assert!(idx.search(&unit(5, 32), 10, |_| true).iter().all(|h| h.0 != 5));
        assert_eq!(idx.len(), 300);
        // Replacing a sealed vector: the new one wins and the id appears once.
        idx.insert(7, &unit(2000, 32));
        let hits = idx.search(&unit(2000, 32), 10, |_| true);
        assert_eq!(hits[0].0, 7);
        assert_eq!(hits.iter().filter(|h| h.0 == 7).count(), 1);
        assert!(idx.score(7, &unit(2000, 32)).unwrap() > 0.99);
    }
}
