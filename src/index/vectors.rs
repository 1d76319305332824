//! The vector index: sealed HNSW segments plus an exact delta segment for recent writes.
//!
//! instant-distance builds an HNSW graph in one go and has no incremental insert, so new
//! vectors go to the **delta**, which every query scans exactly: a recent item can never be
//! missed by the approximate search. [`VectorIndex::maintain`] (the "background step": the host
//! calls it when idle, and the engine calls it when the delta outgrows twice its limit) seals
//! the delta into an HNSW segment and merges segments of similar size, so a namespace holds
//! O(log n) segments. Removing an id tombstones it; tombstones are dropped at the next merge.
//!
//! Vectors are held as int8 with one scale per vector ([`QVec`], 4× smaller than f32). The
//! graph uses int8·int8 distances; the scores returned are the f32 query against the int8
//! vector, which stays within ~1e-3 of the f32 cosine.

use std::cell::RefCell;
use std::sync::Arc;

use instant_distance::{Builder, HnswMap, Point, Search};

use super::FastMap as HashMap;

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

/// A sealed segment's vectors, contiguous: row `r` is `data[r·dim..(r+1)·dim]` × `scales[r]`.
#[derive(Debug)]
pub(super) struct Flat {
    pub(super) dim: usize,
    pub(super) ids: Vec<u64>,
    pub(super) scales: Vec<f32>,
    pub(super) data: Vec<i8>,
}

impl Flat {
    fn row(&self, r: u32) -> &[i8] {
        let r = r as usize;
        &self.data[r * self.dim..(r + 1) * self.dim]
    }
    fn dot_f32(&self, r: u32, q: &[f32]) -> f32 {
        dot_i8_f32(self.row(r), q) * self.scales[r as usize]
    }
    fn qvec(&self, r: u32) -> QVec {
        QVec { scale: self.scales[r as usize], data: self.row(r).into() }
    }
}

/// A graph node: a row of a segment, or the query being searched for.
#[derive(Debug, Clone)]
pub(super) enum Node {
    Row(Arc<Flat>, u32),
    Query(Arc<QVec>),
}

impl Point for Node {
    fn distance(&self, other: &Self) -> f32 {
        let dot = match (self, other) {
            (Node::Row(f, a), Node::Row(g, b)) => {
                dot_i8(f.row(*a), g.row(*b)) as f32 * f.scales[*a as usize] * g.scales[*b as usize]
            }
            (Node::Row(f, a), Node::Query(q)) | (Node::Query(q), Node::Row(f, a)) => {
                dot_i8(f.row(*a), &q.data) as f32 * f.scales[*a as usize] * q.scale
            }
            (Node::Query(p), Node::Query(q)) => p.dot(q),
        };
        1.0 - dot
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
    pub(super) flat: Arc<Flat>,
    pub(super) map: HnswMap<Node, u32>,
}

/// Where an id's current vector is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loc {
    Delta(usize),
    Sealed(usize, u32),
}

/// HNSW segments + exact delta; ids are the engine's episode ids.
pub struct VectorIndex {
    pub(super) config: VectorConfig,
    pub(super) dim: usize,
    pub(super) segments: Vec<Segment>,
    pub(super) delta: Vec<(u64, QVec)>,
    pub(super) loc: HashMap<u64, Loc>,
    /// The serial the next segment built gets.
    pub(super) next_serial: u64,
    /// Reused between queries: a fresh one allocates a visited set the size of the graph.
    search: RefCell<Search>,
}

/// What [`VectorIndex::maintain`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaintainReport {
    /// Vectors sealed from the delta.
    pub sealed: usize,
    /// Segment merges done.
    pub merges: usize,
    /// Segments after the step.
    pub segments: usize,
}

impl VectorIndex {
    /// An empty index for vectors of `dim` dimensions.
    pub fn new(dim: usize, config: VectorConfig) -> Self {
        Self {
            config,
            dim,
            segments: Vec::new(),
            delta: Vec::new(),
            loc: HashMap::default(),
            next_serial: 1,
            search: RefCell::new(Search::default()),
        }
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Live vectors.
    pub fn len(&self) -> usize {
        self.loc.len()
    }

    /// True when no vector is live.
    pub fn is_empty(&self) -> bool {
        self.loc.is_empty()
    }

    /// Vectors in the exact delta segment.
    pub fn delta_len(&self) -> usize {
        self.delta.len()
    }

    /// Sealed HNSW segments.
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// Adds (or replaces) the vector of `id`. The caller checked its dimension.
    pub fn insert(&mut self, id: u64, v: &[f32]) {
        self.remove(id);
        self.loc.insert(id, Loc::Delta(self.delta.len()));
        self.delta.push((id, QVec::new(v)));
    }

    /// True when `id` has a live vector.
    pub fn contains(&self, id: u64) -> bool {
        self.loc.contains_key(&id)
    }

    /// Removes `id`'s vector (a no-op when absent).
    pub fn remove(&mut self, id: u64) {
        match self.loc.remove(&id) {
            Some(Loc::Delta(i)) => {
                self.delta.swap_remove(i);
                if let Some((moved, _)) = self.delta.get(i) {
                    self.loc.insert(*moved, Loc::Delta(i));
                }
            }
            // A sealed row stays in its graph as a tombstone until the next merge.
            Some(Loc::Sealed(..)) | None => {}
        }
    }

    /// True when the delta has outgrown twice its limit and a [`maintain`](Self::maintain)
    /// step is overdue.
    pub fn needs_maintenance(&self) -> bool {
        self.delta.len() >= 2 * self.config.seal_at
    }

    /// Seals the delta when it holds at least `seal_at` vectors (or `force`), then merges
    /// segments while the newest is at least half the size of the one before it.
    pub fn maintain(&mut self, force: bool) -> MaintainReport {
        let mut report = MaintainReport::default();
        if self.delta.is_empty() || (!force && self.delta.len() < self.config.seal_at) {
            report.segments = self.segments.len();
            return report;
        }
        let delta = std::mem::take(&mut self.delta);
        report.sealed = delta.len();
        self.push_segment(delta);
        while self.segments.len() >= 2 {
            let n = self.segments.len();
            if self.segments[n - 1].flat.ids.len() * 2 < self.segments[n - 2].flat.ids.len() {
                break;
            }
            let b = self.segments.pop().expect("two segments");
            let a = self.segments.pop().expect("two segments");
            let mut points = self.live_points(a, n - 2);
            points.extend(self.live_points(b, n - 1));
            self.push_segment(points);
            report.merges += 1;
        }
        report.segments = self.segments.len();
        report
    }

    fn live_points(&self, seg: Segment, index: usize) -> Vec<(u64, QVec)> {
        let flat = seg.flat;
        let mut out = Vec::with_capacity(flat.ids.len());
        for (r, id) in flat.ids.iter().enumerate() {
            let r = r as u32;
            if self.loc.get(id) == Some(&Loc::Sealed(index, r)) {
                out.push((*id, flat.qvec(r)));
            }
        }
        out
    }

    fn push_segment(&mut self, points: Vec<(u64, QVec)>) {
        let index = self.segments.len();
        let mut flat = Flat {
            dim: self.dim,
            ids: Vec::with_capacity(points.len()),
            scales: Vec::with_capacity(points.len()),
            data: Vec::with_capacity(points.len() * self.dim),
        };
        for (r, (id, q)) in points.into_iter().enumerate() {
            self.loc.insert(id, Loc::Sealed(index, r as u32));
            flat.ids.push(id);
            flat.scales.push(q.scale);
            flat.data.extend_from_slice(&q.data);
        }
        let flat = Arc::new(flat);
        let rows = flat.ids.len() as u32;
        let nodes: Vec<Node> = (0..rows).map(|r| Node::Row(flat.clone(), r)).collect();
        let map = Builder::default()
            .ef_construction(self.config.ef_construction)
            .ef_search(self.config.ef_search)
            .seed(self.config.seed)
            .build(nodes, (0..rows).collect());
        let serial = self.next_serial;
        self.next_serial += 1;
        self.segments.push(Segment { serial, flat, map });
    }

    /// The serial numbers of the sealed segments, in search order.
    pub fn segment_serials(&self) -> Vec<u64> {
        self.segments.iter().map(|s| s.serial).collect()
    }

    /// The `k` nearest live vectors to the unit vector `query` among ids `keep` accepts, as
    /// (id, cosine), best first. The delta is scanned exactly; each segment returns its
    /// `ef_search` graph neighbours, filtered afterwards.
    pub fn search(&self, query: &[f32], k: usize, keep: impl Fn(u64) -> bool) -> Vec<(u64, f32)> {
        let mut hits = self.scan_delta(query, &keep);
        if !self.segments.is_empty() {
            let q = Node::Query(Arc::new(QVec::new(query)));
            let mut search = self.search.borrow_mut();
            for (index, seg) in self.segments.iter().enumerate() {
                for item in seg.map.search(&q, &mut search) {
                    let r = *item.value;
                    let id = seg.flat.ids[r as usize];
                    if self.loc.get(&id) == Some(&Loc::Sealed(index, r)) && keep(id) {
                        hits.push((id, seg.flat.dot_f32(r, query)));
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
                if self.loc.get(id) == Some(&Loc::Sealed(index, r)) && keep(*id) {
                    hits.push((*id, seg.flat.dot_f32(r, query)));
                }
            }
        }
        top_k(hits, k)
    }

    /// Exact cosines of the delta's vectors that `keep` accepts.
    fn scan_delta(&self, query: &[f32], keep: &impl Fn(u64) -> bool) -> Vec<(u64, f32)> {
        self.delta
            .iter()
            .filter(|(id, _)| keep(*id))
            .map(|(id, v)| (*id, v.dot_f32(query)))
            .collect()
    }

    /// The cosine of one id's vector with `query`, if it is live.
    pub fn score(&self, id: u64, query: &[f32]) -> Option<f32> {
        match *self.loc.get(&id)? {
            Loc::Delta(i) => Some(self.delta[i].1.dot_f32(query)),
            Loc::Sealed(s, r) => Some(self.segments[s].flat.dot_f32(r, query)),
        }
    }

    /// The cosine of two live ids' vectors.
    pub fn pair(&self, a: u64, b: u64) -> Option<f32> {
        let (sa, ra) = self.row(a)?;
        let (sb, rb) = self.row(b)?;
        Some(dot_i8(ra, rb) as f32 * sa * sb)
    }

    fn row(&self, id: u64) -> Option<(f32, &[i8])> {
        match *self.loc.get(&id)? {
            Loc::Delta(i) => Some((self.delta[i].1.scale, &self.delta[i].1.data)),
            Loc::Sealed(s, r) => {
                let f = &self.segments[s].flat;
                Some((f.scales[r as usize], f.row(r)))
            }
        }
    }

    /// Approximate bytes held: vectors, graph nodes and links, and the id map.
    pub fn memory(&self) -> usize {
        let delta = self.delta.len() * (self.dim + 8 + 8 + 16);
        // Per sealed row: the int8 row, scale, id, the node (24 B), its value, and layer-0's
        // 2·M = 64 u32 links (upper layers add ~1/M of that).
        let sealed: usize = self
            .segments
            .iter()
            .map(|s| s.flat.ids.len() * (self.dim + 4 + 8 + 24 + 4 + 264))
            .sum();
        delta + sealed + self.loc.capacity() * 32
    }
}

fn top_k(mut hits: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.dedup_by_key(|h| h.0);
    hits.truncate(k);
    hits
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let v: Vec<f32> = (0..dim)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
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
    fn recent_writes_are_found_exactly_and_removals_hide_ids() {
        let config = VectorConfig { seal_at: 64, ..VectorConfig::default() };
        let mut idx = VectorIndex::new(32, config);
        for i in 0..300 {
            idx.insert(i, &unit(i, 32));
            if idx.needs_maintenance() {
                idx.maintain(false);
            }
        }
        idx.maintain(true);
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
