//! Byte forms of the derived indexes, for snapshots (`engine::persist::snapshot`): loading these is
//! much faster than rebuilding them (no tokenising, no quantising, no HNSW build).
//!
//! Little-endian, written with [`Writer`]; `str` and `bytes` are length-prefixed.
//!
//! ```text
//! bm25     := k1:f32 b:f32 total_len:u64
//!             docs:u32 (id_gap:var len:var)×docs          ascending id
//!             terms:u32 (term:str n:var (id_gap:var tf:var)×n)×terms
//!                                                        terms ascending, postings by id
//! id_gap  := the id minus the previous id of the same list (the first: minus 0)
//! vectors  := dim:u32 ef_search:u32 segments:u32 (segment_part rows)×segments
//!             delta:u32 (id:u64 scale:f32 row:bytes(i8×dim))×delta
//! segment_part := rows:u32 ids:bytes(id_step:var×rows) seqs:bytes graph:bytes
//! rows_part    := seqs:bytes rows
//! rows         := (scale:f32 row:i8×dim)×(the seqs' count)
//! id_step := the row's id minus the previous row's (the first: minus 0), wrapping, zigzag
//!            (0, -1, 1, -2… as 0, 1, 2, 3…): a segment's ids mostly ascend by a little, so a
//!            row's id takes a byte or two instead of eight
//! seqs    := the rows' numbers in the sequence of rows sealed, as runs (`index::row_seqs`)
//! ```
//!
//! The whole form (`vectors`, for tests and the fuzzer) keeps each segment's rows after it. A
//! snapshot stores them apart: a **segment part** per sealed segment
//! ([`VectorIndex::encode_segment`]) holds its ids, the seqs of its rows and its graph, and a
//! **rows part** ([`VectorIndex::encode_rows_part`]) holds the rows of a range of seqs — each
//! row is written once, when it is first stored, and a merge, which renumbers no row, writes
//! only its segment part (ids, seqs, links: about a tenth of the rows' bytes). An index is
//! assembled from the segment parts in search order ([`VectorIndex::add_segment`], decoded as
//! their bytes arrive by `index::segment_fields`), then the rows parts in seq order, each row
//! copied into the segment row that has its seq (rows no segment has any more are skipped);
//! the rows not sealed yet it quantises again from their vector records
//! ([`VectorIndex::insert_row`]).
//!
//! `graph` is the segment's HNSW graph in its own byte form (`index::hnsw`: levels and links by
//! row number; decoding checks every link against the rows). The engine's snapshot header
//! names the layout, and a snapshot written by another layout is rebuilt instead of read.
//! Which rows are live is not stored:
//! segments are read in order, then the delta, the last location of an id wins, and the engine
//! then drops every id whose episode is no longer live.

use super::bm25::Bm25;
use super::hnsw::Graph;
use super::postings::Postings;
use super::row_seqs::RowSeqs;
use super::vectors::{Flat, Loc, QVec, Segment, VectorConfig, VectorIndex};
use crate::error::{Error, Result};
use crate::store::codec::{leb128, section, zigzag, Reader, Sink, Window, Writer};

impl Bm25 {
    /// Appends the index's byte form (module docs) to `w`.
    pub fn encode(&self, w: &mut Writer) {
        self.encode_range(w, (0, u64::MAX), u64::MAX);
    }

    /// Appends the byte form of the index restricted to the documents whose key, masked by
    /// `mask`, lies in `ids` (`[lo, hi)`): what [`Bm25::decode`] reads back is the index those
    /// documents alone would make. Keys above `mask` are a document's extra parts (an
    /// episode's windows, whose keys carry the window in the bits above the id). Each posting
    /// list is entered through its skips ([`Postings::from`]), so a small range costs little
    /// in a large index.
    pub fn encode_range(&self, w: &mut Writer, (lo, hi): (u64, u64), mask: u64) {
        let within = |key: u64| (lo..hi).contains(&(key & mask));
        let mut docs: Vec<(u64, u32)> =
            self.doc_len.iter().filter(|&(i, _)| within(i)).map(|(i, &l)| (i, l)).collect();
        docs.sort_unstable();
        let total: u64 = docs.iter().map(|d| u64::from(d.1)).sum();
        w.f32(self.k1).f32(self.b).u64(total);
        w.u32(docs.len() as u32);
        let mut prev = 0;
        for (id, len) in docs {
            w.var(id - prev).var(u64::from(len));
            prev = id;
        }
        // Per term: the plain keys in range, then the extra parts' keys in range (all above
        // `mask`, so the list stays in ascending order).
        let mut terms: Vec<(&str, Vec<(u64, u32)>)> = Vec::new();
        for (term, list) in &self.postings {
            let mut cut: Vec<(u64, u32)> =
                list.from(lo).take_while(|p| p.0 < hi.min(mask.saturating_add(1))).collect();
            if let Some(high) = mask.checked_add(1) {
                cut.extend(list.from(high).filter(|p| within(p.0)));
            }
            if !cut.is_empty() {
                terms.push((term.as_str(), cut));
            }
        }
        terms.sort_unstable_by(|a, b| a.0.cmp(b.0));
        w.u32(terms.len() as u32);
        for (term, cut) in terms {
            w.str(term).var(cut.len() as u64);
            let mut prev = 0;
            for (id, tf) in cut {
                w.var(id - prev).var(u64::from(tf));
                prev = id;
            }
        }
    }

    /// Adds the documents of `other`, an index of other documents made with the same `k1` and
    /// `b` (a document in both keeps `other`'s version).
    pub fn absorb(&mut self, other: Bm25) -> Result<()> {
        if (other.k1, other.b) != (self.k1, self.b) {
            return Err(Error::Corrupt {
                what: "BM25 snapshot part".into(),
                detail: format!(
                    "k1 {} b {} where the index has {} {}",
                    other.k1, other.b, self.k1, self.b
                ),
            });
        }
        if other.doc_len.keys().any(|id| self.doc_len.contains_key(id)) {
            for id in other.doc_len.keys() {
                self.remove(id);
            }
        }
        self.total_len = self.total_len.saturating_add(other.total_len);
        self.doc_len.reserve_for(other.doc_len.keys());
        for (id, &len) in other.doc_len.iter() {
            self.doc_len.insert(id, len);
        }
        for (term, list) in other.postings {
            match self.postings.get_mut(&term) {
                None => {
                    self.postings.insert(term, list);
                }
                Some(docs) => {
                    // Appended in order when `other` lies above, else merged and re-encoded.
                    let above = docs
                        .last()
                        .is_none_or(|last| list.iter().next().is_none_or(|f| last < f.0));
                    if above {
                        for (id, tf) in list.iter() {
                            docs.push(id, tf);
                        }
                    } else {
                        let mut all: Vec<(u64, u32)> = docs.iter().chain(list.iter()).collect();
                        all.sort_unstable_by_key(|p| p.0);
                        *docs = Postings::from_sorted(all);
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads what [`Bm25::encode`] wrote.
    pub fn decode(r: &mut Reader) -> Result<Self> {
        let (k1, b, total_len) = (r.f32()?, r.f32()?, r.u64()?);
        let mut index = Bm25::new(k1, b);
        index.total_len = total_len;
        let docs = r.u32()? as usize;
        // The ids first, to allocate the table once (they are checked on the second pass).
        let mut ids = r.clone();
        let (mut id, mut left) = (0u64, docs);
        index.doc_len.reserve_for(std::iter::from_fn(move || {
            left = left.checked_sub(1)?;
            id = id.checked_add(ids.var().ok()?)?;
            ids.var().ok()?;
            Some(id)
        }));
        let mut id = 0u64;
        for _ in 0..docs {
            id =
                id.checked_add(r.var()?).ok_or_else(|| r.corrupt("document id overflow".into()))?;
            let len = u32::try_from(r.var()?).map_err(|_| r.corrupt("document length".into()))?;
            index.doc_len.insert(id, len);
        }
        let terms = r.u32()? as usize;
        index.postings.reserve(terms.min(r.remaining() / 8));
        for _ in 0..terms {
            let term = super::bm25::Term::from(r.str()?);
            let n = r.var()? as usize;
            let list = Postings::read(r, n, &term)?;
            index.postings.insert(term, list);
        }
        Ok(index)
    }
}

/// A segment's ids as `id_step`s (module docs), each with the bytes it takes.
fn id_steps(ids: &[u64]) -> impl Iterator<Item = ([u8; 10], usize)> + '_ {
    let mut prev = 0u64;
    ids.iter().map(move |&id| {
        let step = zigzag(id.wrapping_sub(prev) as i64);
        prev = id;
        leb128(step)
    })
}

/// The bytes of a segment's `ids` section.
pub(super) fn ids_len(ids: &[u64]) -> usize {
    id_steps(ids).map(|(_, n)| n).sum()
}

/// Puts `ids` as a section of `id_step`s (module docs): `len:u32` then the steps.
pub(super) fn put_ids(w: &mut impl Sink, ids: &[u64]) {
    section(w, ids_len(ids), |w| {
        let mut buf = Vec::with_capacity(4096 + 10);
        for (step, n) in id_steps(ids) {
            buf.extend_from_slice(&step[..n]);
            if buf.len() >= 4096 {
                w.put(&buf);
                buf.clear();
            }
        }
        w.put(&buf);
    });
}

/// Reads a segment's `ids` section, which must hold exactly `rows` ids.
pub(super) fn read_ids(bytes: &[u8], rows: usize) -> Result<Vec<u64>> {
    let mut r = Reader::new(bytes, "vector segment ids");
    let mut ids = Vec::new();
    ids.try_reserve_exact(rows.min(bytes.len()))
        .map_err(|_| r.corrupt(format!("{rows} ids: not enough memory")))?;
    let mut prev = 0u64;
    for _ in 0..rows {
        prev = prev.wrapping_add(r.zvar()? as u64);
        ids.push(prev);
    }
    r.end()?;
    Ok(ids)
}

/// Puts `seg`'s part form (`segment_part`, module docs) without building any of it beside the
/// segment, so a [`Window`](crate::store::codec::Window) can take a slice of it.
fn encode_segment(seg: &Segment, w: &mut impl Sink) {
    let f = &seg.flat;
    let rows = f.ids.len();
    w.put(&(rows as u32).to_le_bytes());
    put_ids(w, &f.ids);
    section(w, seg.seqs.encoded_len(), |w| {
        let mut s = Writer::new();
        seg.seqs.encode(&mut s);
        w.put(&s.finish());
    });
    section(w, seg.graph.encoded_len(), |w| seg.graph.encode(w));
}

/// The length of [`encode_segment`]'s bytes.
fn segment_len(seg: &Segment) -> usize {
    4 + 4 + ids_len(&seg.flat.ids) + 4 + seg.seqs.encoded_len() + 4 + seg.graph.encoded_len()
}

/// Puts `rows` (`scale:f32 row:i8×dim` each) for a rows part or the whole form, computing
/// only the rows the sink keeps.
fn put_rows<'a>(w: &mut impl Sink, dim: usize, rows: impl Iterator<Item = (f32, &'a [i8])>) {
    let mut buf = Vec::with_capacity(4 + dim);
    for (scale, row) in rows {
        if !w.needs(4 + dim) {
            w.skip(4 + dim);
            continue;
        }
        buf.clear();
        buf.extend_from_slice(&scale.to_le_bytes());
        buf.extend(row.iter().map(|&x| x as u8));
        w.put(&buf);
    }
}

/// Reads segment number `s` (in search order) of the whole form, giving it `serial`.
fn decode_segment(r: &mut Reader, dim: usize, s: usize, serial: u64) -> Result<Segment> {
    let rows = r.u32()? as usize;
    let fail = |r: &Reader, e: Error| r.corrupt(format!("segment {s}: {e}"));
    let ids = read_ids(r.bytes()?, rows).map_err(|e| fail(r, e))?;
    let seqs = RowSeqs::decode(&mut Reader::new(r.bytes()?, "vector segment seqs"), rows)
        .map_err(|e| fail(r, e))?;
    let mut g = Reader::new(r.bytes()?, "vector segment graph");
    let graph = Graph::decode(&mut g, rows).map_err(|e| fail(r, e))?;
    g.end().map_err(|e| fail(r, e))?;
    let mut flat = Flat { dim, ids, scales: Vec::new(), data: Vec::new() };
    for _ in 0..rows {
        let (scale, row) = (r.f32()?, r.take_bytes(dim)?);
        flat.scales.push(scale);
        flat.data.extend(row.iter().map(|&x| x as i8));
    }
    Ok(Segment { serial, flat, graph, seqs })
}

fn decode_row(r: &mut Reader, dim: usize) -> Result<(u64, QVec)> {
    let (id, scale, row) = (r.u64()?, r.f32()?, r.bytes()?);
    if row.len() != dim {
        return Err(r.corrupt(format!("delta row of {} bytes", row.len())));
    }
    Ok((id, QVec { scale, data: row.iter().map(|&x| x as i8).collect() }))
}

impl VectorIndex {
    /// Appends the index's whole byte form (module docs).
    pub fn encode(&self, w: &mut Writer) -> Result<()> {
        w.u32(self.dim as u32).u32(self.config.ef_search as u32).u32(self.segments.len() as u32);
        for seg in &self.segments {
            encode_segment(seg, w);
            let f = &seg.flat;
            put_rows(
                w,
                self.dim,
                (0..f.ids.len() as u32).map(|r| (f.scales[r as usize], f.row(r))),
            );
        }
        self.encode_rows(w);
        Ok(())
    }

    /// The length of sealed segment `serial`'s part form (`None`: there is none).
    pub fn segment_len(&self, serial: u64) -> Option<usize> {
        self.segments.iter().find(|s| s.serial == serial).map(segment_len)
    }

    /// Bytes `[start, start + len)` of sealed segment `serial`'s part form (`None`: there is
    /// none): a segment part written a slice at a time, never held whole.
    pub fn segment_slice(&self, serial: u64, start: usize, len: usize) -> Option<Vec<u8>> {
        let seg = self.segments.iter().find(|s| s.serial == serial)?;
        let mut w = Window::new(start, len);
        encode_segment(seg, &mut w);
        Some(w.finish())
    }

    /// Appends sealed segment `serial`'s part form (`segment_part` in the module docs); false
    /// when there is none.
    pub fn encode_segment(&self, serial: u64, w: &mut Writer) -> Result<bool> {
        match self.segments.iter().find(|s| s.serial == serial) {
            Some(seg) => {
                encode_segment(seg, w);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The sealed rows whose seqs lie in `[lo, hi)`, in seq order, as (seq, scale, row): the
    /// segments in search order list their seqs ascending (`index::row_seqs`).
    fn rows_between(&self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, f32, &[i8])> + '_ {
        self.segments.iter().filter(move |seg| seg.seqs.overlaps(lo, hi)).flat_map(move |seg| {
            let f = &seg.flat;
            seg.seqs
                .iter()
                .enumerate()
                .filter(move |(_, q)| (lo..hi).contains(q))
                .map(move |(r, q)| (q, f.scales[r], f.row(r as u32)))
        })
    }

    /// How many rows the sealed segments hold whose seqs lie in `[lo, hi)`.
    pub fn rows_held(&self, lo: u64, hi: u64) -> usize {
        let overlap = |&(first, len): &(u64, u32)| {
            let (a, b) = (first.max(lo), (first + u64::from(len)).min(hi));
            b.saturating_sub(a) as usize
        };
        self.segments.iter().flat_map(|seg| seg.seqs.runs().iter().map(overlap)).sum()
    }

    /// True when a sealed segment holds a row whose seq lies in `[lo, hi)`: a rows part of
    /// those seqs is still needed.
    pub fn holds_rows(&self, lo: u64, hi: u64) -> bool {
        self.segments.iter().any(|seg| seg.seqs.overlaps(lo, hi))
    }

    /// Puts the rows part of seqs `[lo, hi)` (`rows_part`, module docs).
    fn put_rows_part(&self, lo: u64, hi: u64, w: &mut impl Sink) {
        let mut seqs = RowSeqs::default();
        for (q, ..) in self.rows_between(lo, hi) {
            seqs.push(q);
        }
        section(w, seqs.encoded_len(), |w| {
            let mut s = Writer::new();
            seqs.encode(&mut s);
            w.put(&s.finish());
        });
        put_rows(w, self.dim, self.rows_between(lo, hi).map(|(_, scale, row)| (scale, row)));
    }

    /// The length of the rows part of seqs `[lo, hi)`.
    pub fn rows_part_len(&self, lo: u64, hi: u64) -> usize {
        let mut seqs = RowSeqs::default();
        for (q, ..) in self.rows_between(lo, hi) {
            seqs.push(q);
        }
        4 + seqs.encoded_len() + seqs.len() * (4 + self.dim)
    }

    /// Bytes `[start, start + len)` of the rows part of seqs `[lo, hi)`, written a slice at a
    /// time like a segment part.
    pub fn rows_part_slice(&self, lo: u64, hi: u64, start: usize, len: usize) -> Vec<u8> {
        let mut w = Window::new(start, len);
        self.put_rows_part(lo, hi, &mut w);
        w.finish()
    }

    /// Appends the rows part of seqs `[lo, hi)`.
    pub fn encode_rows_part(&self, lo: u64, hi: u64, w: &mut Writer) {
        self.put_rows_part(lo, hi, w);
    }

    /// Appends the unsealed rows: the delta's and a seal's in progress (`delta` in the module
    /// docs).
    fn encode_rows(&self, w: &mut Writer) {
        let rows: Vec<(u64, f32, &[i8])> = self.unsealed().collect();
        w.u32(rows.len() as u32);
        for (id, scale, row) in rows {
            w.u64(id).f32(scale);
            let row: Vec<u8> = row.iter().map(|&x| x as u8).collect();
            w.bytes(&row);
        }
    }

    /// Reads what [`VectorIndex::encode`] wrote, for vectors of `dim` dimensions tuned by
    /// `config` (a snapshot of another dimension or `ef_search` is refused).
    pub fn decode(r: &mut Reader, dim: usize, config: VectorConfig) -> Result<Self> {
        let (d, ef) = (r.u32()? as usize, r.u32()? as usize);
        if d != dim || ef != config.ef_search {
            return Err(r.corrupt(format!(
                "snapshot of dim {d}, ef_search {ef}; this index is dim {dim}, ef_search {}",
                config.ef_search
            )));
        }
        let mut index = VectorIndex::new(dim, config);
        let segments = r.u32()? as usize;
        for s in 0..segments {
            let seg = decode_segment(r, dim, s, s as u64 + 1)?;
            match seg.seqs.bounds() {
                Some((first, _)) if first < index.next_seq => {
                    return Err(r.corrupt(format!("segment {s}: seqs below an earlier segment's")))
                }
                Some((_, past)) => index.next_seq = past,
                None => {}
            }
            for (row, id) in seg.flat.ids.iter().enumerate() {
                index.loc.insert(*id, Loc::Sealed(s, row as u32));
            }
            index.next_serial = s as u64 + 2;
            index.segments.push(seg);
        }
        let delta = r.u32()? as usize;
        index.delta.reserve(delta.min(r.remaining() / (dim + 16)));
        for _ in 0..delta {
            let (id, q) = decode_row(r, dim)?;
            if let Some(Loc::Delta(_)) = index.loc.get(id) {
                return Err(r.corrupt(format!("id {id} twice in the delta")));
            }
            index.loc.insert(id, Loc::Delta(index.delta.len()));
            index.delta.push((id, q));
        }
        Ok(index)
    }

    /// Every id with a live vector.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.loc.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::test_vectors::unit;

    /// An index of `n` `dim`-dimensional vectors, sealed in segments of `seal_at`.
    fn sealed(dim: usize, n: u64, seal_at: usize) -> VectorIndex {
        let config = VectorConfig { seal_at, ..VectorConfig::default() };
        let mut v = VectorIndex::new(dim, config);
        for id in 0..n {
            v.insert(id, &unit(id, dim));
        }
        v.maintain(true, u64::MAX);
        v
    }

    #[test]
    fn a_segment_written_in_slices_is_the_segment_written_whole() {
        let v = sealed(32, 300, 100);
        for serial in v.segment_serials() {
            let mut w = Writer::new();
            assert!(v.encode_segment(serial, &mut w).unwrap());
            let whole = w.finish();
            assert_eq!(v.segment_len(serial), Some(whole.len()));
            for size in [1, 7, 512, 4096, whole.len()] {
                let mut sliced = Vec::new();
                while sliced.len() < whole.len() {
                    sliced.extend(v.segment_slice(serial, sliced.len(), size).unwrap());
                }
                assert_eq!(sliced, whole, "slices of {size}");
            }
        }
        assert_eq!(v.segment_len(u64::MAX), None);
    }

    #[test]
    fn indexes_read_back_answer_exactly_as_written() {
        let config = VectorConfig { seal_at: 100, ..VectorConfig::default() };
        let mut v = VectorIndex::new(32, config);
        let mut b = Bm25::default();
        for id in 0..450u64 {
            v.insert(id, &unit(id, 32));
            b.insert(id, &format!("word{} word{} shared", id % 7, id % 13));
            if id == 239 || id == 299 {
                v.maintain(true, u64::MAX); // two segments (240 and 60 rows), then a delta of 150
            }
        }
        v.remove(3); // a tombstone in a sealed segment
        v.remove(420); // and one in the delta
        b.remove(3);
        let mut w = Writer::new();
        b.encode(&mut w);
        v.encode(&mut w).unwrap();
        let bytes = w.finish();
        let mut r = Reader::new(&bytes, "test");
        let b2 = Bm25::decode(&mut r).unwrap();
        let mut v2 = VectorIndex::decode(&mut r, 32, config).unwrap();
        r.end().unwrap();
        // Liveness is the engine's to restore (module docs): drop the tombstoned row again.
        assert!(v2.ids().any(|id| id == 3));
        v2.remove(3);
        assert_eq!((v2.len(), v2.segment_count(), v2.delta_len()), (448, 2, 149));
        for q in 0..20u64 {
            let query = unit(1000 + q, 32);
            assert_eq!(v2.search(&query, 10, |_| true), v.search(&query, 10, |_| true));
            let text = format!("word{} shared", q % 7);
            assert_eq!(b2.search(&text, 10, |_| true), b.search(&text, 10, |_| true));
        }
        assert!(VectorIndex::decode(&mut Reader::new(&bytes[..bytes.len() - 1], "t"), 32, config)
            .is_err());
        let other = VectorConfig { ef_search: 10, ..config };
        let mut r = Reader::new(&bytes, "test");
        Bm25::decode(&mut r).unwrap();
        assert!(VectorIndex::decode(&mut r, 32, other).is_err(), "another ef_search is refused");
    }

    #[test]
    fn a_range_of_documents_reads_back_as_the_index_they_alone_make() {
        const MASK: u64 = (1 << 48) - 1;
        let text = |id: u64| format!("word{} word{} shared", id % 5, id % 11);
        let mut all = Bm25::default();
        let mut alone = Bm25::default();
        for id in 1..200u64 {
            // Every seventh document also has two windows, keyed above the id bits.
            let keys: Vec<u64> =
                if id % 7 == 0 { vec![id, id | (1 << 48), id | (2 << 48)] } else { vec![id] };
            for key in keys {
                all.insert(key, &text(key));
                if (60..130).contains(&id) {
                    alone.insert(key, &text(key));
                }
            }
        }
        let (mut a, mut b) = (Writer::new(), Writer::new());
        all.encode_range(&mut a, (60, 130), MASK);
        alone.encode(&mut b);
        assert_eq!(a.finish(), b.finish());
        let mut w = Writer::new();
        all.encode_range(&mut w, (0, 1 << 48), MASK);
        let mut everything = Writer::new();
        all.encode(&mut everything);
        assert_eq!(w.finish(), everything.finish());
    }

    /// Whatever the bytes of a graph say, decoding either refuses them or yields an index
    /// that searches without panicking (a link past the rows would index out of bounds).
    #[test]
    fn a_damaged_graph_is_refused_or_harmless() {
        let v = sealed(8, 60, 60);
        let mut w = Writer::new();
        v.encode(&mut w).unwrap();
        let bytes = w.finish();
        // The graph is the last `bytes` field of the segment, before the empty delta (4 bytes).
        let graph_end = bytes.len() - 4;
        let mut g = Writer::new();
        v.segments[0].graph.encode(&mut g);
        let graph_len = g.finish().len();
        let graph_start = graph_end - graph_len;
        let (mut refused, mut accepted) = (0, 0);
        for at in graph_start..graph_end {
            for value in [0x00, 0x3b, 0x7f, 0xff] {
                let mut b = bytes.clone();
                b[at] = value;
                match VectorIndex::decode(&mut Reader::new(&b, "t"), 8, v.config) {
                    Err(_) => refused += 1,
                    Ok(index) => {
                        accepted += 1;
                        for q in 0..3 {
                            index.search(&unit(500 + q, 8), 5, |_| true);
                        }
                    }
                }
            }
        }
        assert!(refused > 0 && accepted > 0, "refused {refused}, accepted {accepted}");
    }
}
