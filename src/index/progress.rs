//! A graph build's progress, stored and resumed: the rows it takes and its HNSW graph so far.
//!
//! A seal of a large delta (a bulk import, a namespace rebuilt from its records) or a merge of
//! two large segments inserts every one of its rows into a new graph, spread over many
//! budgeted `maintain` calls ([`VectorIndex::maintain`]). A host process may not live that
//! long: a browser extension's service worker is stopped after some idle seconds, a Durable
//! Object is evicted. Were the job to start again from its first row after each restart, a
//! build longer than the host's lifetime would never end. So the engine stores a build's
//! progress now and then (`engine::persist::snapshot`, a part of kind 4) and a restarted
//! index takes the job up where the stored progress left it.
//!
//! Byte form (`index::persist` conventions):
//!
//! ```text
//! progress := job:u8 rows:u32 taken graph:bytes
//! taken    := seqs:bytes                     job 0, a merge: the rows' seqs
//!           | ids:bytes(id_step×rows) crc:u32   job 1, a seal: the rows' keys, and the CRC-32
//!                                               of their rows (scale:f32 row:i8×dim each)
//! ```
//!
//! `rows` is how many rows the job takes, in its row order, and `graph` the graph over the
//! first of them inserted so far (`index::hnsw`'s byte form; it may cover fewer than `rows`).
//! A merge's rows are named by their numbers in the sequence of rows sealed
//! (`index::row_seqs`): its sources, the newest two segments, hold them, and are stored in the
//! same snapshot (the snapshot head names them). A seal's rows are not stored anywhere but in
//! the vector records (`engine::persist::snapshot` lists them as unsealed), so they are named
//! by key: opening quantises them again into the delta, and the seal takes them back from
//! there when each key is still in the delta and the rows' CRC-32 is the stored one (a key
//! removed or given another vector since: the seal starts over instead).
//!
//! A graph is deterministic given its rows, their order and the seed (levels are a hash of
//! the row number, ties break by row number), and the stored graph is the graph in memory
//! (slot for slot), so a resumed build ends with the very graph an uninterrupted one builds.

use super::hnsw::Graph;
use super::persist::{ids_len, put_ids, read_ids};
use super::row_seqs::RowSeqs;
use super::vectors::{Build, Flat, Loc, Stashed, VectorIndex};
use crate::error::{Error, Result};
use crate::store::codec::{section, Reader, Sink, Window, Writer};
use crate::store::fields::{word, Field, Fields, Want};

const MERGE: u8 = 0;
const SEAL: u8 = 1;

/// The CRC-32 of rows `0..rows` of `flat` (scale then int8s, each row).
fn rows_crc(flat: &Flat) -> u32 {
    let mut h = crc32fast::Hasher::new();
    let mut buf = Vec::with_capacity(4 + flat.dim);
    for r in 0..flat.ids.len() {
        buf.clear();
        buf.extend_from_slice(&flat.scales[r].to_le_bytes());
        buf.extend(flat.row(r as u32).iter().map(|&x| x as u8));
        h.update(&buf);
    }
    h.finalize()
}

impl VectorIndex {
    /// The build in progress as a snapshot names its progress: a merge by the serials of its
    /// two segments (older, newer), a seal by the first seq its rows will get and 0.
    pub fn building(&self) -> Option<(u64, u64)> {
        let b = self.build.as_ref()?;
        if b.merge {
            self.merging()
        } else {
            Some((self.next_seq, 0))
        }
    }

    /// The merge in progress, as the serials of its two segments (older first).
    pub fn merging(&self) -> Option<(u64, u64)> {
        let n = self.segments.len();
        match &self.build {
            Some(b) if b.merge && n >= 2 => {
                Some((self.segments[n - 2].serial, self.segments[n - 1].serial))
            }
            _ => None,
        }
    }

    /// Work (distances computed) the build in progress has spent since it began or its
    /// progress was last stored: what a restart would lose.
    pub fn unsaved_work(&self) -> u64 {
        self.build.as_ref().map_or(0, |b| b.unsaved)
    }

    /// True when the build's progress, once stored, could be taken up after a restart: a
    /// merge's always (its rows stay in its segments); a seal's while none of its rows was
    /// removed or given another vector since it began (opening finds each row it takes by its
    /// key, in the delta).
    pub fn progress_resumable(&self) -> bool {
        match &self.build {
            Some(b) if b.merge => true,
            Some(b) => b
                .flat
                .ids
                .iter()
                .enumerate()
                .all(|(r, id)| self.loc.get(*id) == Some(&Loc::Building(r as u32))),
            None => false,
        }
    }

    /// Tells the index that the progress of the build in progress, as
    /// [`progress_slice`](Self::progress_slice) gave it, is stored.
    pub fn progress_stored(&mut self) {
        if let Some(b) = self.build.as_mut() {
            b.unsaved = 0;
        }
    }

    /// Puts the build's progress (module docs); false when no build is in progress.
    fn put_progress(&self, w: &mut impl Sink) -> bool {
        let Some(b) = self.build.as_ref() else { return false };
        w.put(&[if b.merge { MERGE } else { SEAL }]);
        w.put(&(b.flat.ids.len() as u32).to_le_bytes());
        if b.merge {
            section(w, b.seqs.encoded_len(), |w| {
                let mut s = Writer::new();
                b.seqs.encode(&mut s);
                w.put(&s.finish());
            });
        } else {
            put_ids(w, &b.flat.ids);
            let crc = if w.needs(4) { rows_crc(&b.flat) } else { 0 };
            w.put(&crc.to_le_bytes());
        }
        section(w, b.graph.encoded_len(), |w| b.graph.encode(w));
        true
    }

    /// The length of the build's progress in bytes (`None`: no build is in progress).
    pub fn progress_len(&self) -> Option<usize> {
        let b = self.build.as_ref()?;
        let taken = if b.merge { 4 + b.seqs.encoded_len() } else { 4 + ids_len(&b.flat.ids) + 4 };
        Some(1 + 4 + taken + 4 + b.graph.encoded_len())
    }

    /// Bytes `[start, start + len)` of the build's progress (`None`: no build is in
    /// progress), written a slice at a time while the build waits.
    pub fn progress_slice(&self, start: usize, len: usize) -> Option<Vec<u8>> {
        let mut w = Window::new(start, len);
        self.put_progress(&mut w).then(|| w.finish())
    }

    /// Appends the build's progress; false when no build is in progress.
    pub fn encode_progress(&self, w: &mut Writer) -> bool {
        self.put_progress(w)
    }

    /// Takes up the build whose progress `fields` decoded, named as [`building`] names it
    /// (`lo`, `hi`). A merge's is checked at once, and refused unless its segments are the
    /// two newest and hold every row it names. A seal's is kept until the delta is whole
    /// ([`resume_seal`](Self::resume_seal)).
    ///
    /// [`building`]: Self::building
    pub(crate) fn resume(&mut self, lo: u64, hi: u64, fields: ProgressFields) -> Result<()> {
        let bad =
            |detail: String| Err(Error::Corrupt { what: ProgressFields::WHAT.into(), detail });
        let Some(graph) = fields.graph else {
            return bad("its bytes end before its graph".into());
        };
        if self.build.is_some() || self.stashed.is_some() {
            return bad("a second build in progress".into());
        }
        if graph.len() > fields.rows {
            return bad(format!("a graph of {} rows for {} rows", graph.len(), fields.rows));
        }
        match fields.taken {
            Taken::Seal(ids, crc) if hi == 0 => {
                self.stashed = Some(Stashed { first_seq: lo, ids, crc, graph });
                Ok(())
            }
            Taken::Merge(seqs) if hi != 0 => self.resume_merge(lo, hi, seqs, graph),
            _ => bad(format!("a job that is not the one its entry ({lo}, {hi}) names")),
        }
    }

    fn resume_merge(&mut self, older: u64, newer: u64, seqs: RowSeqs, graph: Graph) -> Result<()> {
        let bad =
            |detail: String| Err(Error::Corrupt { what: ProgressFields::WHAT.into(), detail });
        let n = self.segments.len();
        let newest = (n >= 2).then(|| (self.segments[n - 2].serial, self.segments[n - 1].serial));
        if newest != Some((older, newer)) {
            return bad(format!(
                "a merge of segments {older} and {newer}, which are not the newest two"
            ));
        }
        let held = self.segments[n - 2].flat.ids.len() + self.segments[n - 1].flat.ids.len();
        if seqs.len() > held {
            return bad(format!("{} rows of segments holding {held}", seqs.len()));
        }
        let mut flat = Flat::with_capacity(self.dim, seqs.len());
        let mut from = Vec::with_capacity(seqs.len());
        let mut want = seqs.iter().peekable();
        for index in [n - 2, n - 1] {
            let seg = &self.segments[index];
            for (r, seq) in seg.seqs.iter().enumerate() {
                if want.peek() == Some(&seq) {
                    want.next();
                    flat.push(seg.flat.ids[r], seg.flat.scales[r], seg.flat.row(r as u32));
                    from.push(Loc::Sealed(index, r as u32));
                }
            }
        }
        if let Some(seq) = want.next() {
            return bad(format!("row seq {seq}, which neither segment holds"));
        }
        drop(want);
        self.build = Some(Build { flat, graph, merge: true, from, seqs, unsaved: 0 });
        Ok(())
    }

    /// Takes up the seal whose progress [`resume`](Self::resume) kept, once the delta holds
    /// every unsealed vector (after a namespace is opened): its rows are taken from the delta,
    /// which keeps the others in order. True when it was taken up; false when there was none,
    /// or when a key is no longer in the delta, the rows differ from the stored CRC-32 or the
    /// rows sealed since were numbered differently — the seal then starts over.
    pub(crate) fn resume_seal(&mut self) -> bool {
        let Some(s) = self.stashed.take() else { return false };
        if self.build.is_some() || s.first_seq != self.next_seq || s.ids.len() > self.delta.len() {
            return false;
        }
        let mut flat = Flat::with_capacity(self.dim, s.ids.len());
        for id in &s.ids {
            let Some(&Loc::Delta(i)) = self.loc.get(*id) else { return false };
            let (_, q) = &self.delta[i];
            flat.push(*id, q.scale, &q.data);
        }
        if rows_crc(&flat) != s.crc {
            return false;
        }
        let taken: std::collections::HashSet<u64> = s.ids.iter().copied().collect();
        let delta = std::mem::take(&mut self.delta);
        for (id, q) in delta {
            if !taken.contains(&id) {
                self.loc.insert(id, Loc::Delta(self.delta.len()));
                self.delta.push((id, q));
            }
        }
        for (r, id) in s.ids.iter().enumerate() {
            self.loc.insert(*id, Loc::Building(r as u32));
        }
        let (from, seqs) = (Vec::new(), RowSeqs::default());
        self.build = Some(Build { flat, graph: s.graph, merge: false, from, seqs, unsaved: 0 });
        true
    }
}

/// The rows a build takes, as its progress names them.
enum Taken {
    None,
    Merge(RowSeqs),
    Seal(Vec<u64>, u32),
}

/// The decoder of a build's progress (module docs), as its bytes arrive (`store::fields`).
pub(crate) struct ProgressFields {
    step: u8,
    job: u8,
    rows: usize,
    taken: Taken,
    graph: Option<Graph>,
}

impl Default for ProgressFields {
    fn default() -> Self {
        ProgressFields { step: 0, job: 0, rows: 0, taken: Taken::None, graph: None }
    }
}

fn corrupt(detail: String) -> Error {
    Error::Corrupt { what: ProgressFields::WHAT.into(), detail }
}

impl Fields for ProgressFields {
    const WHAT: &'static str = "build progress";

    fn first(&self) -> Want {
        Want::Read(1)
    }

    fn take(&mut self, field: Field) -> Result<Want> {
        self.step += 1;
        let Field::Read(b) = field else { return Err(corrupt("a kept field".into())) };
        Ok(match (self.step, self.job) {
            (1, _) => {
                self.job = b[0];
                if self.job > SEAL {
                    return Err(corrupt(format!("job {}", self.job)));
                }
                Want::Read(4)
            }
            (2, _) => {
                self.rows = word(b) as usize;
                Want::Read(4)
            }
            (3, _) | (5, MERGE) | (6, SEAL) => Want::Read(word(b) as usize),
            (4, MERGE) => {
                let mut r = Reader::new(b, "build progress seqs");
                let seqs = RowSeqs::decode(&mut r, self.rows).and_then(|s| r.end().map(|()| s));
                self.taken = Taken::Merge(seqs.map_err(|e| corrupt(e.to_string()))?);
                Want::Read(4)
            }
            (4, _) => {
                let ids = read_ids(b, self.rows).map_err(|e| corrupt(e.to_string()))?;
                self.taken = Taken::Seal(ids, 0);
                Want::Read(4)
            }
            (5, _) => {
                if let Taken::Seal(_, crc) = &mut self.taken {
                    *crc = word(b);
                }
                Want::Read(4)
            }
            _ => {
                let mut r = Reader::new(b, "build progress graph");
                let rows = r.clone().u32().map_err(|e| corrupt(e.to_string()))? as usize;
                if rows > self.rows {
                    return Err(corrupt(format!("a graph of {rows} rows for {} rows", self.rows)));
                }
                let graph = Graph::decode(&mut r, rows).and_then(|g| r.end().map(|()| g));
                self.graph = Some(graph.map_err(|e| corrupt(e.to_string()))?);
                Want::Done
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::test_vectors::unit;
    use crate::index::vectors::VectorConfig;
    use crate::store::fields::Cutter;

    /// Two segments of 300 rows each (so a merge is due), some rows removed.
    fn two_segments() -> VectorIndex {
        let config = VectorConfig { seal_at: 300, ..VectorConfig::default() };
        let mut v = VectorIndex::new(16, config);
        for id in 0..600u64 {
            v.insert(id, &unit(id, 16));
            if id == 299 {
                v.maintain(false, u64::MAX);
                v.remove(7);
            }
        }
        v
    }

    fn decode(bytes: &[u8]) -> Result<ProgressFields> {
        let mut c = Cutter::new(ProgressFields::default(), bytes.len())?;
        c.push(bytes)?;
        c.finish()
    }

    #[test]
    fn a_merge_resumed_from_its_stored_progress_ends_as_one_never_stopped() {
        let mut whole = two_segments();
        whole.maintain(false, u64::MAX);
        let mut stopped = two_segments();
        // Seal the second segment, then a little of the merge.
        while stopped.merging().is_none() || stopped.build.as_ref().unwrap().graph.len() < 50 {
            stopped.maintain(false, 2_000);
        }
        let at = stopped.build.as_ref().unwrap().graph.len();
        assert!(at < 580 && stopped.unsaved_work() > 0, "stopped mid-merge, at row {at}");
        let mut w = Writer::new();
        assert!(stopped.encode_progress(&mut w));
        let bytes = w.finish();
        assert_eq!(stopped.progress_len(), Some(bytes.len()));
        let mut sliced = Vec::new();
        while sliced.len() < bytes.len() {
            sliced.extend(stopped.progress_slice(sliced.len(), 97).unwrap());
        }
        assert_eq!(sliced, bytes);
        let (older, newer) = stopped.merging().unwrap();
        // A restarted index: the same segments, without the job.
        let mut restarted = two_segments();
        restarted.maintain_with(false, u64::MAX, |_, serials| serials.len() < 2);
        assert_eq!(restarted.merging(), None);
        assert_eq!(restarted.segment_serials(), vec![older, newer]);
        restarted.resume(older, newer, decode(&bytes).unwrap()).unwrap();
        assert_eq!(restarted.build.as_ref().unwrap().graph.len(), at);
        assert_eq!(restarted.unsaved_work(), 0);
        let report = restarted.maintain(false, u64::MAX);
        assert_eq!((report.merges, report.segments), (1, 1));
        let encoded = |v: &VectorIndex| {
            let mut w = Writer::new();
            v.encode(&mut w).unwrap();
            w.finish()
        };
        assert_eq!(encoded(&restarted), encoded(&whole), "the same segment, graph and rows");
        for q in 0..20 {
            let query = unit(10_000 + q, 16);
            assert_eq!(restarted.search(&query, 10, |_| true), whole.search(&query, 10, |_| true));
        }
    }

    #[test]
    fn a_seal_resumed_from_its_stored_progress_ends_as_one_never_stopped() {
        let config = VectorConfig { seal_at: 300, ..VectorConfig::default() };
        let fill = |v: &mut VectorIndex, ids: std::ops::Range<u64>| {
            for id in ids {
                v.insert(id, &unit(id, 16));
            }
        };
        let mut whole = VectorIndex::new(16, config);
        fill(&mut whole, 0..500);
        whole.maintain(true, u64::MAX);
        let mut stopped = VectorIndex::new(16, config);
        fill(&mut stopped, 0..500);
        while stopped.build.as_ref().is_none_or(|b| b.graph.len() < 100) {
            stopped.maintain(true, 2_000);
        }
        let (lo, hi) = stopped.building().unwrap();
        assert_eq!((lo, hi), (0, 0), "a seal, named by the first seq its rows get");
        let mut w = Writer::new();
        assert!(stopped.encode_progress(&mut w));
        let bytes = w.finish();
        assert_eq!(stopped.progress_len(), Some(bytes.len()));
        // Reopened: the same vectors back in the delta (from their records), in another order.
        let reopened = || {
            let mut v = VectorIndex::new(16, config);
            fill(&mut v, 250..500);
            fill(&mut v, 0..250);
            v
        };
        let mut resumed = reopened();
        resumed.resume(lo, hi, decode(&bytes).unwrap()).unwrap();
        assert!(resumed.build.is_none(), "kept until the delta is whole");
        assert!(resumed.resume_seal());
        assert_eq!((resumed.delta_len(), resumed.segment_count()), (500, 0));
        resumed.maintain(true, u64::MAX);
        let encoded = |v: &VectorIndex| {
            let mut w = Writer::new();
            v.encode(&mut w).unwrap();
            w.finish()
        };
        assert_eq!(encoded(&resumed), encoded(&whole), "the same segment, graph and rows");
        // A row given another vector since: the seal starts over, and still ends right.
        let mut changed = reopened();
        changed.insert(42, &unit(9_999, 16));
        changed.resume(lo, hi, decode(&bytes).unwrap()).unwrap();
        assert!(!changed.resume_seal());
        assert!(changed.build.is_none());
        changed.maintain(true, u64::MAX);
        assert_eq!((changed.len(), changed.segment_count()), (500, 1));
        // A key gone since: the same.
        let mut gone = reopened();
        gone.remove(7);
        gone.resume(lo, hi, decode(&bytes).unwrap()).unwrap();
        assert!(!gone.resume_seal());
    }

    #[test]
    fn progress_that_does_not_fit_the_segments_is_refused() {
        let mut v = two_segments();
        while v.merging().is_none() || v.build.as_ref().unwrap().graph.len() < 20 {
            v.maintain(false, 2_000);
        }
        let mut w = Writer::new();
        v.encode_progress(&mut w);
        let bytes = w.finish();
        let (older, newer) = v.merging().unwrap();
        let fresh = || {
            let mut r = two_segments();
            r.maintain_with(false, u64::MAX, |_, serials| serials.len() < 2);
            r
        };
        assert!(fresh().resume(newer, older, decode(&bytes).unwrap()).is_err());
        assert!(fresh().resume(older, newer + 1, decode(&bytes).unwrap()).is_err());
        // A seq neither segment holds.
        let mut other = Writer::new();
        other.u8(0).u32(1);
        let mut seqs = Writer::new();
        RowSeqs::span(5_000, 1).encode(&mut seqs);
        other.bytes(&seqs.finish());
        let mut graph = Writer::new();
        Graph::new().encode(&mut graph);
        other.bytes(&graph.finish());
        let other = other.finish();
        assert!(fresh().resume(older, newer, decode(&other).unwrap()).is_err());
        // Every cut and every flipped byte is refused or harmless.
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err() || cut == bytes.len(), "cut at {cut}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            if let Ok(f) = decode(&b) {
                let mut r = fresh();
                if r.resume(older, newer, f).is_ok() {
                    r.maintain(false, u64::MAX);
                    r.search(&unit(1, 16), 10, |_| true);
                }
            }
        }
    }
}
