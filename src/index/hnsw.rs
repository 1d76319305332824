//! An HNSW graph (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search
//! using Hierarchical Navigable Small World graphs", 2018) over the rows of one segment, built
//! **one row at a time**, so that a host can spread a build over many short calls
//! ([`super::vectors::VectorIndex::maintain`] with a work budget).
//!
//! The graph knows rows only by number; distances come from the caller (the segment's int8
//! rows). Every step is deterministic: a row's level is a hash of the seed and the row number,
//! and ties between equal distances break by row number.
//!
//! - Levels: `⌊−ln(u) / ln M⌋` with `u` uniform in (0, 1] from the hash, capped at
//!   [`MAX_LEVEL`]. About one row in `M` reaches level 1.
//! - Links: up to `M0 = 2·M` per row on level 0 and `M` on each upper level, chosen by the
//!   paper's heuristic (a candidate is kept only when it is closer to the new row than to every
//!   neighbour kept before it), which keeps links spread across clusters.
//! - Work: every distance computed counts one unit, returned to the caller to charge against
//!   its budget.
//!
//! Byte form (little-endian; read back by [`Graph::decode`], which checks every link against
//! the row count so a damaged graph is refused instead of indexing out of bounds):
//!
//! ```text
//! graph := rows:u32 entry:u32 levels:u8×rows counts:u8×rows (link×count) for each row
//!          (links:u32×(level·M)) for each row with level ≥ 1, in row order
//! link  := the row number, little-endian in `link_width(rows)` bytes: 2 for up to 65,536
//!          rows, 3 for up to 2²⁴, else 4
//! ```
//!
//! A row's level-0 links fill its `M0` slots from the front; `count` says how many are used
//! (about three quarters on 384-d data), and only those are stored, in slot order, in as few
//! bytes as the row numbers need (`index::links`, which holds them so once the graph is
//! sealed). An empty upper-level slot is `u32::MAX`.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::links::{link_width, Zero, EMPTY};
use super::FastMap as HashMap;
use crate::store::codec::{Reader, Sink};

pub use super::links::{M, M0};
/// The highest level a row can reach.
pub const MAX_LEVEL: u8 = 12;

/// A row and its distance to whatever is being searched for, ordered by distance then row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Near {
    pub(super) dist: f32,
    pub(super) row: u32,
}

impl Eq for Near {}
impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Near {
    fn cmp(&self, other: &Self) -> Ordering {
        self.dist.total_cmp(&other.dist).then(self.row.cmp(&other.row))
    }
}

/// Which rows a search has reached: an epoch per row, so clearing is one increment.
#[derive(Debug, Default)]
pub(super) struct Visited {
    marks: Vec<u32>,
    epoch: u32,
}

impl Visited {
    fn reset(&mut self, rows: usize) {
        if self.marks.len() < rows {
            self.marks.resize(rows, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
    }

    /// True the first time `row` is seen since the last reset.
    fn first(&mut self, row: u32) -> bool {
        let mark = &mut self.marks[row as usize];
        let first = *mark != self.epoch;
        *mark = self.epoch;
        first
    }
}

/// The graph over rows `0..len()`.
#[derive(Debug, Clone, Default)]
pub(super) struct Graph {
    levels: Vec<u8>,
    /// Level-0 links.
    zero: Zero,
    /// For each row above level 0: `level · M` slots, level 1 first.
    upper: HashMap<u32, Box<[u32]>>,
    /// The row searches start from (`EMPTY` while the graph is empty): one of the highest.
    entry: u32,
}

/// The level of row `row` in a graph seeded with `seed`.
pub(super) fn level_of(seed: u64, row: u32) -> u8 {
    // splitmix64 of the seed and the row: a fixed, well-mixed hash.
    let mut z = seed ^ (u64::from(row) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let u = ((z >> 11) + 1) as f64 / (1u64 << 53) as f64; // (0, 1]
    let level = (-u.ln() / (M as f64).ln()).floor();
    level.min(f64::from(MAX_LEVEL)) as u8
}

impl Graph {
    /// An empty graph.
    pub(super) fn new() -> Self {
        Self { entry: EMPTY, ..Self::default() }
    }

    /// Rows in the graph.
    pub(super) fn len(&self) -> usize {
        self.levels.len()
    }

    /// Approximate bytes held.
    pub(super) fn memory(&self) -> usize {
        self.levels.len()
            + self.zero.memory()
            + self.upper.values().map(|l| 4 * l.len() + 32).sum::<usize>()
    }

    /// Packs the level-0 links (`index::links`): the graph is sealed, no row is added again.
    pub(super) fn pack(&mut self) {
        self.zero.pack(self.levels.len());
    }

    /// Calls `f` with each of `row`'s links on `level`.
    #[inline]
    fn each_link(&self, row: u32, level: u8, mut f: impl FnMut(u32)) {
        if level == 0 {
            return self.zero.each(row, f);
        }
        let l = usize::from(level - 1) * M;
        if let Some(links) = self.upper.get(&row) {
            links[l..l + M].iter().take_while(|&&n| n != EMPTY).for_each(|&n| f(n));
        }
    }

    fn links_mut(&mut self, row: u32, level: u8) -> &mut [u32] {
        if level == 0 {
            let at = row as usize * M0;
            &mut self.zero.slots()[at..at + M0]
        } else {
            let l = usize::from(level - 1) * M;
            &mut self.upper.get_mut(&row).expect("a row above level 0 has upper links")[l..l + M]
        }
    }

    fn top(&self) -> u8 {
        self.levels.get(self.entry as usize).copied().unwrap_or(0)
    }

    /// Moves from `at` to ever closer neighbours on `level` until none is closer.
    fn greedy(&self, mut at: Near, level: u8, dist: &mut impl FnMut(u32) -> f32) -> Near {
        loop {
            let mut moved = false;
            self.each_link(at.row, level, |n| {
                let near = Near { dist: dist(n), row: n };
                if near < at {
                    at = near;
                    moved = true;
                }
            });
            if !moved {
                return at;
            }
        }
    }

    /// The `ef` nearest rows reachable on `level` from `entries`, nearest first.
    fn search_level(
        &self,
        entries: &[Near],
        ef: usize,
        level: u8,
        dist: &mut impl FnMut(u32) -> f32,
        visited: &mut Visited,
    ) -> Vec<Near> {
        visited.reset(self.len());
        let mut todo: BinaryHeap<Reverse<Near>> = BinaryHeap::new();
        let mut best: BinaryHeap<Near> = BinaryHeap::new();
        for &e in entries {
            if visited.first(e.row) {
                todo.push(Reverse(e));
                best.push(e);
            }
        }
        while best.len() > ef {
            best.pop();
        }
        while let Some(Reverse(c)) = todo.pop() {
            if best.len() >= ef && best.peek().is_some_and(|w| c > *w) {
                break;
            }
            self.each_link(c.row, level, |n| {
                if !visited.first(n) {
                    return;
                }
                let near = Near { dist: dist(n), row: n };
                if best.len() < ef || best.peek().is_some_and(|w| near < *w) {
                    todo.push(Reverse(near));
                    best.push(near);
                    if best.len() > ef {
                        best.pop();
                    }
                }
            });
        }
        best.into_sorted_vec()
    }

    /// The `ef` rows nearest to what `dist` measures the distance to, nearest first.
    pub(super) fn search(
        &self,
        ef: usize,
        dist: &mut impl FnMut(u32) -> f32,
        visited: &mut Visited,
    ) -> Vec<Near> {
        if self.entry == EMPTY {
            return Vec::new();
        }
        let mut at = Near { dist: dist(self.entry), row: self.entry };
        for level in (1..=self.top()).rev() {
            at = self.greedy(at, level, dist);
        }
        self.search_level(&[at], ef.max(1), 0, dist, visited)
    }

    /// Adds the next row (`len()`) at `level`; `dist(a, b)` is the distance between two rows.
    /// Returns the distances computed.
    pub(super) fn insert(
        &mut self,
        level: u8,
        ef_construction: usize,
        dist: &impl Fn(u32, u32) -> f32,
        visited: &mut Visited,
    ) -> u64 {
        let row = self.levels.len() as u32;
        self.levels.push(level);
        self.zero.slots().extend([EMPTY; M0]);
        if level > 0 {
            self.upper.insert(row, vec![EMPTY; usize::from(level) * M].into_boxed_slice());
        }
        if self.entry == EMPTY {
            self.entry = row;
            return 0;
        }
        let computed = std::cell::Cell::new(0u64);
        let mut to_row = |r: u32| {
            computed.set(computed.get() + 1);
            dist(row, r)
        };
        let mut work = 0u64;
        let top = self.top();
        let mut at = Near { dist: to_row(self.entry), row: self.entry };
        for l in (level.saturating_add(1)..=top).rev() {
            at = self.greedy(at, l, &mut to_row);
        }
        let mut entries = vec![at];
        let mut chosen_per_level = Vec::new();
        for l in (0..=level.min(top)).rev() {
            let found = self.search_level(&entries, ef_construction, l, &mut to_row, visited);
            let (chosen, units) = select(&found, M, dist);
            work += units;
            chosen_per_level.push((l, chosen));
            entries = found;
        }
        for (l, chosen) in chosen_per_level {
            for (slot, n) in self.links_mut(row, l).iter_mut().zip(&chosen) {
                *slot = n.row;
            }
            for n in chosen {
                work += self.link_back(n.row, row, n.dist, l, dist);
            }
        }
        if level > top {
            self.entry = row;
        }
        work + computed.get()
    }

    /// Adds `row` (at distance `d`) to `from`'s links on `level`, pruning them by the heuristic
    /// when full. Returns the distances computed.
    fn link_back(
        &mut self,
        from: u32,
        row: u32,
        d: f32,
        level: u8,
        dist: &impl Fn(u32, u32) -> f32,
    ) -> u64 {
        let max = if level == 0 { M0 } else { M };
        let links = self.links_mut(from, level);
        if let Some(slot) = links.iter_mut().find(|s| **s == EMPTY) {
            *slot = row;
            return 0;
        }
        let mut work = max as u64;
        let mut all: Vec<Near> =
            links.iter().map(|&n| Near { dist: dist(from, n), row: n }).collect();
        all.push(Near { dist: d, row });
        all.sort_unstable();
        let (kept, units) = select(&all, max, dist);
        work += units;
        let links = self.links_mut(from, level);
        links.fill(EMPTY);
        for (slot, n) in links.iter_mut().zip(kept) {
            *slot = n.row;
        }
        work
    }

    /// Appends the byte form (module docs).
    pub(super) fn encode(&self, w: &mut impl Sink) {
        let rows = self.levels.len();
        w.put(&(rows as u32).to_le_bytes());
        w.put(&self.entry.to_le_bytes());
        w.put(&self.levels);
        if w.needs(rows) {
            w.put(&self.zero.counts());
        } else {
            w.skip(rows);
        }
        let total = self.zero.used() * link_width(rows);
        if w.needs(total) {
            self.zero.put_links(rows, &mut |b| w.put(b));
        } else {
            w.skip(total);
        }
        for (row, &level) in self.levels.iter().enumerate() {
            if level > 0 {
                put_words(w, self.upper.get(&(row as u32)).map_or(&[], |l| &l[..]));
            }
        }
    }

    /// The length of the byte form.
    pub(super) fn encoded_len(&self) -> usize {
        let rows = self.levels.len();
        let upper: usize = self.levels.iter().map(|&l| usize::from(l) * M).sum();
        8 + 2 * rows + self.zero.used() * link_width(rows) + upper * 4
    }

    /// Reads the byte form of a graph over `rows` rows, refusing one whose links or entry
    /// point past the rows, whose upper-level links lead to rows below that level, or whose
    /// entry is not on the highest level: whatever the bytes, searching what it returns
    /// cannot index out of bounds.
    pub(super) fn decode(r: &mut Reader, rows: usize) -> crate::error::Result<Self> {
        let n = r.u32()? as usize;
        if n != rows {
            return Err(r.corrupt(format!("graph of {n} rows for a segment of {rows}")));
        }
        let entry = r.u32()?;
        let levels = r.take_bytes(rows)?.to_vec();
        let counts = r.take_bytes(rows)?;
        let links = r.take_bytes(Zero::stored_len(counts, rows))?.to_vec();
        let zero = Zero::from_stored(counts, links, rows).map_err(|e| r.corrupt(e))?;
        Self::from_parts(entry, levels, zero, r)
    }

    /// A graph from its byte form's fields already read — `entry`, `levels` (a row each) and
    /// the level-0 links `zero` (checked by [`Zero::from_stored`]) — and `r`, which holds the
    /// upper levels' links; checked as [`Graph::decode`] says.
    pub(super) fn from_parts(
        entry: u32,
        levels: Vec<u8>,
        zero: Zero,
        r: &mut Reader,
    ) -> crate::error::Result<Self> {
        let rows = levels.len();
        if let Some(l) = levels.iter().find(|&&l| l > MAX_LEVEL) {
            return Err(r.corrupt(format!("graph level {l} above {MAX_LEVEL}")));
        }
        let check = |r: &Reader, link: u32| {
            if link != EMPTY && link as usize >= rows {
                return Err(r.corrupt(format!("graph link to row {link} of {rows}")));
            }
            Ok(link)
        };
        let mut upper = HashMap::default();
        for (row, &level) in levels.iter().enumerate() {
            if level > 0 {
                let mut links = Vec::with_capacity(usize::from(level) * M);
                for _ in 0..usize::from(level) * M {
                    let link = r.u32()?;
                    links.push(check(r, link)?);
                }
                upper.insert(row as u32, links.into_boxed_slice());
            }
        }
        // A link on level l must lead to a row that reaches level l: a search walks that row's
        // level-l links next.
        for (&row, links) in &upper {
            for (slot, &link) in links.iter().enumerate() {
                let level = (slot / M + 1) as u8;
                if link != EMPTY && levels[link as usize] < level {
                    return Err(r.corrupt(format!(
                        "graph link on level {level} from row {row} to row {link} of level {}",
                        levels[link as usize]
                    )));
                }
            }
        }
        let top = levels.iter().copied().max();
        let entry_ok = match top {
            None => entry == EMPTY,
            Some(top) => (entry as usize) < rows && levels[entry as usize] == top,
        };
        if !entry_ok {
            return Err(r.corrupt(format!("graph entry {entry} is not a row on the top level")));
        }
        Ok(Self { levels, zero, upper, entry })
    }
}

/// Puts `words` little-endian, a block at a time (skipped when the sink keeps none of them).
pub(super) fn put_words(w: &mut impl Sink, words: &[u32]) {
    if !w.needs(words.len() * 4) {
        return w.skip(words.len() * 4);
    }
    let mut buf = [0u8; 1024];
    for block in words.chunks(buf.len() / 4) {
        for (out, word) in buf.chunks_exact_mut(4).zip(block) {
            out.copy_from_slice(&word.to_le_bytes());
        }
        w.put(&buf[..block.len() * 4]);
    }
}

/// The paper's neighbour-selection heuristic: walk `found` (nearest first) and keep a
/// candidate when it is nearer to the base than to every candidate kept so far, up to `max`.
/// Returns the kept ones and the distances computed.
fn select(found: &[Near], max: usize, dist: &impl Fn(u32, u32) -> f32) -> (Vec<Near>, u64) {
    let mut kept: Vec<Near> = Vec::with_capacity(max);
    let mut work = 0u64;
    for &c in found {
        if kept.len() >= max {
            break;
        }
        let mut good = true;
        for k in &kept {
            work += 1;
            if dist(c.row, k.row) < c.dist {
                good = false;
                break;
            }
        }
        if good {
            kept.push(c);
        }
    }
    (kept, work)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::codec::Writer;

    fn points(n: usize, dim: usize) -> Vec<Vec<f32>> {
        (0..n as u64).map(|i| crate::index::test_vectors::unit(i, dim)).collect()
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// A graph over the first `n` of `p`, inserted in order.
    fn built(p: &[Vec<f32>], n: u32, seed: u64, ef: usize) -> (Graph, Visited) {
        let dist = |a: u32, b: u32| 1.0 - cos(&p[a as usize], &p[b as usize]);
        let (mut g, mut visited) = (Graph::new(), Visited::default());
        for r in 0..n {
            g.insert(level_of(seed, r), ef, &dist, &mut visited);
        }
        (g, visited)
    }

    #[test]
    fn finds_the_exact_neighbours_of_most_queries() {
        let (n, dim) = (2000, 16);
        let p = points(n + 50, dim);
        let (g, mut visited) = built(&p, n as u32, 7, 40);
        let mut found = 0;
        for q in &p[n..] {
            let mut exact: Vec<Near> = (0..n as u32)
                .map(|r| Near { dist: 1.0 - cos(q, &p[r as usize]), row: r })
                .collect();
            exact.sort_unstable();
            let hits = g.search(64, &mut |r| 1.0 - cos(q, &p[r as usize]), &mut visited);
            found +=
                exact[..10].iter().filter(|e| hits[..10].iter().any(|h| h.row == e.row)).count();
        }
        let recall = found as f64 / 500.0;
        assert!(recall >= 0.95, "recall@10 {recall}");
    }

    #[test]
    fn byte_form_reads_back_and_damage_is_refused_or_harmless() {
        let p = points(300, 8);
        let (g, mut visited) = built(&p, 300, 1, 20);
        let mut w = Writer::new();
        g.encode(&mut w);
        let bytes = w.finish();
        let back = Graph::decode(&mut Reader::new(&bytes, "t"), 300).unwrap();
        let q = &p[17];
        let search =
            |g: &Graph, v: &mut Visited| g.search(10, &mut |r| 1.0 - cos(q, &p[r as usize]), v);
        assert_eq!(search(&back, &mut visited), search(&g, &mut visited));
        assert_eq!(search(&g, &mut visited)[0].row, 17);
        let (mut refused, mut accepted) = (0, 0);
        for at in (0..bytes.len()).step_by(7) {
            for value in [0x00, 0x7f, 0xff] {
                let mut b = bytes.clone();
                b[at] = value;
                match Graph::decode(&mut Reader::new(&b, "t"), 300) {
                    Err(_) => refused += 1,
                    Ok(g) => {
                        accepted += 1;
                        search(&g, &mut visited);
                    }
                }
            }
        }
        assert!(refused > 0 && accepted > 0, "refused {refused}, accepted {accepted}");
    }

    #[test]
    fn an_upper_link_to_a_row_below_its_level_is_refused() {
        let p = points(400, 8);
        let (mut g, _) = built(&p, 400, 1, 20);
        let high = (0..400u32).find(|&r| g.levels[r as usize] > 0).expect("a row above level 0");
        let low = (0..400u32).find(|&r| g.levels[r as usize] == 0).expect("a row on level 0");
        g.upper.get_mut(&high).expect("upper links")[0] = low;
        let mut w = Writer::new();
        g.encode(&mut w);
        let err = Graph::decode(&mut Reader::new(&w.finish(), "t"), 400).unwrap_err();
        assert!(err.to_string().contains("level 1"), "{err}");
    }

    #[test]
    fn levels_fall_off_by_m() {
        let above: usize = (0..100_000).filter(|&r| level_of(3, r) > 0).count();
        assert!((5000..7500).contains(&above), "{above} of 100000 rows above level 0");
    }
}
