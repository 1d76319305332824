//! Snapshots: a namespace's episodes and derived indexes stored as immutable parts, so a cold
//! open copies bytes instead of tokenising text, quantising vectors and building HNSW graphs,
//! and so a snapshot taken after a few changes writes about what changed, not the namespace.
//!
//! Keys under [`Table::Snapshot`]:
//!
//! ```text
//! head                      kind 7: layout:str watermark:u64 next_part:u64 parts:u32 part×parts
//!                           pending:u32 pending×pending runs:u32 run×runs
//! part                      := id:u64 kind:u8 lo:u64 hi:u64 chunks:u32 len:u64 hash:u64
//! pending                   := id:u64 kind:u8 lo:u64 hi:u64 chunks:u32 len:u64 total:u64
//!                              lanes:u64×4 tail:bytes   a segment, rows or progress part
//!                                           written ahead (len of total bytes so far; lanes
//!                                           and tail: its hash's state)
//! run                       := first:var len:var   the vector keys first … first + len − 1
//! p/<id:u64 BE><i:u32 BE>   chunk i of part `id`, raw bytes (at most Config::snapshot_chunk)
//! d/<id:u64 BE>             empty: episode `id` (below the watermark) changed after its part
//!                           was written
//! a/<id:u64 BE>             last_accessed_at:i64 access_count:u32: episode `id` (below the
//!                           watermark) was recalled since its part was written, and its
//!                           record has these access statistics now
//!
//! kind 1, episodes [lo, hi): bm25:bytes n:u32 block×⌈n/256⌉ records:bytes
//! kind 2, vector segment:   the sealed HNSW segment whose serial is `lo`: its ids, the seqs
//!                           of its rows and its graph (`segment_part`, `index::persist`)
//! kind 3, rows [lo, hi):    the int8 rows sealed with seqs in [lo, hi) that a segment held
//!                           when the part was written (`rows_part`, `index::persist`)
//! kind 4, build progress:  the graph build in progress: the merge of segments `lo`
//!                           (older) and `hi`, or (`hi` 0) the seal whose rows get seqs from
//!                           `lo`; the rows it takes and its graph so far (`progress`,
//!                           `index::progress`)
//! block := len:u32 hot×min(256, hots left)   (len: the block's bytes)
//! hot   := id_gap:var created:zvar accessed:zvar access_count:var importance:f32 tier:u8
//!          status:u8 expires_at:zvar cold:u8 record_len:var
//!          id_gap: the id minus the previous hot's (the first: minus `lo`); created: the
//!          creation time minus the previous hot's (the first: minus 0); accessed: the last
//!          access minus the creation time — about 17 bytes where fixed widths took 47
//! ```
//!
//! An episodes part holds the episodes with ids in `[lo, hi)` as they were when it was written:
//! their BM25 documents (`index::persist`, the documents of those episodes alone) and each
//! episode's own sealed record (checksummed as in the store), in the order of the `hot`
//! entries; a cold open keeps the records as one arena and decodes an episode only when it is
//! needed whole (`engine::episodes`).
//!
//! Vectors not in a sealed segment yet (the exact delta, and a seal in progress) are not
//! stored at all: the head lists their keys (`unsealed`, in the delta's order, as runs of
//! consecutive keys), and opening quantises them again from their vector records, which give
//! the same int8 rows. Storing them would cost each change its row twice, once in its episodes
//! part and again in the segment it is sealed into; the records are read anyway for the
//! episodes past the watermark, and a host that keeps them in its own storage hands over
//! these few thousand before the parts (`engine::lazy`).
//!
//! A segment part is written once, when the segment is new, and deleted when a merge replaces
//! it. Its rows are not in it: each row sealed gets the next number of one sequence (its seq,
//! `index::row_seqs`), and a rows part holds the rows of a range of seqs, written once, the
//! first time a snapshot finds rows sealed past the last rows part. A merge renumbers no row,
//! so it costs a segment part of ids, seqs and links (about 40 bytes a row) and no rows (388
//! bytes a row of 384 dimensions). A rows part is deleted once no segment holds any of its
//! rows, and written again with the rows still held once fewer than half of its rows are (the
//! others were removed and a merge dropped them), so stored rows follow the live ones; an
//! erasure deletes the whole snapshot. `hash` is [`hash`] over the part's bytes; `layout`
//! names this format and the encodings it relies on.
//!
//! The parts cover the ids below `watermark`. Opening reads them all (BM25 documents are
//! merged), adds the unsealed vectors from their records, then re-reads from their records the
//! episodes marked dirty (status changes, corrections) and every episode at or above the
//! watermark, and takes the access statistics of the access entries (`a/`) over the parts'.
//! Recalls change only those statistics, and many episodes at a time: an access entry is 12
//! bytes that opening applies without reading the record, where a dirty marker costs a record
//! read on open and counts toward a full rewrite. A snapshot is a cache, never the source of truth: one whose layout,
//! hashes or contents do not check out is ignored, the namespace is rebuilt from its records,
//! and [`Opened::Rebuilt`] says why. So is one with a marker or access entry whose key names no
//! episode (its first snapshot then deletes them all); an access entry whose value is damaged
//! counts as a dirty marker (the record has the statistics).
//!
//! Writing one is one atomic batch. Usually it is **incremental**: one new episodes part for
//! the ids since the last watermark, the segments not stored yet, a rows part for the rows
//! sealed since the last, the deletion of segments merged away and of rows parts no segment
//! needs, and the head. Dirty markers and access entries stay until a **full** rewrite, which
//! replaces every episodes part by one and absorbs them; it is chosen when there is no
//! snapshot yet, when the markers outnumber an eighth of the watermark (and 256), when the
//! access entries outnumber half of it (and 256), or when there are more than
//! [`MAX_EPISODE_PARTS`] episodes parts.
//!
//! Under a work budget (`Engine::maintain`), the new segments' parts and the new rows part are
//! first written **ahead**, a slice of whole chunks per call ([`ahead`]), each slice's batch
//! also rewriting the head with the same parts and watermark plus the progress of the parts
//! written ahead (`pending`). Nothing reads a pending part, so a crash between slices leaves a
//! snapshot as good as before; the call that finds every new segment and row written writes
//! the episodes part and the head that lists them. A rows part's bytes must not change while
//! it is written a slice at a time, so the index keeps every row not stored yet through merges,
//! removed ones too (`VectorIndex::rows_stored_below`). A segment lives in memory only until its part is listed, so the
//! pending parts a namespace is opened with are orphans: the next snapshot write deletes their
//! chunks, as it does for a part whose segment was merged away before it was listed.
//!
//! **A long graph build's progress** is stored too, so that a host whose process lives
//! shorter than a large seal or merge still finishes it (`index::progress`). Each time a build
//! has spent [`PROGRESS_EVERY`] budgets' work since its progress was last stored (and four
//! times what writing the progress costs), it waits while its progress is written ahead, a
//! slice a call (the graph does not change meanwhile). A stored progress needs a snapshot that
//! lists every segment (a merge's rows are in its segments, and a seal's rows are numbered
//! after the stored ones), so a build foreseen to take that long starts only once one does
//! (about [`WORK_PER_ROW`] units a row), and one that runs longer than foreseen waits for one
//! first, so that the first progress is stored within a few calls of the first wait. The call that writes the last slice lists the
//! part in the head in place of the one before; a snapshot written whole meanwhile writes it
//! whole. Opening a snapshot that lists one takes the build up from there. The next head
//! written once the build is over drops the part. A seal one of whose rows was removed since
//! it began stores none (opening would not find that row).

use crate::embed::passages::MAX_PASSAGES;
use crate::engine::episodes::{Episodes, Hot};
use crate::error::Result;
use crate::index::bm25::Bm25;
use crate::index::vectors::VectorIndex;
use crate::index::FastSet;
use crate::record::episode::status_code;
use crate::store::codec::{open, seal, Reader, Writer};
use crate::store::scan::{scan_all, scan_pages};
use crate::store::{Batch, KvStore, Namespace, Table};

pub(super) const HEAD_KIND: u8 = 7;
pub(super) const CHUNKS_PER_PAGE: usize = 16;
pub(super) const EPISODES: u8 = 1;
/// `hot` entries per block of an episodes part (module docs): a decoder reads a block at a
/// time, a few kilobytes.
pub(super) const HOTS_PER_BLOCK: usize = 256;
pub(super) const SEGMENT: u8 = 2;
pub(super) const ROWS: u8 = 3;
pub(super) const PROGRESS: u8 = 4;
/// A graph build's progress is stored each time it has spent this many budgets' work (a
/// budget is what one `maintain` call may spend) since it began or was last stored, and this
/// many times the work its bytes count for: a restart loses at most about this many calls'
/// work, and writing the progress (about 50 bytes a row so far) takes at most a quarter of
/// the build's calls.
pub(crate) const PROGRESS_EVERY: u64 = 4;
/// About the work (distances computed) one row's insertion into a graph costs (384-d rows,
/// `ef_construction` 40; 150–250 measured): how long a build will take is foreseen from its
/// rows.
pub(crate) const WORK_PER_ROW: u64 = 200;
/// Episodes parts a snapshot may have before the next one is a full rewrite.
pub(crate) const MAX_EPISODE_PARTS: usize = 256;
/// This format, the lexical analysis its BM25 postings were made with (`terms/2`: words,
/// whole tokens and Snowball stems, `index::stem::index_terms`; `windows/1`: a text of more
/// than 128 words indexed as its windows, `engine::namespace::LoadedNamespace::bm25_insert`), and the graph
/// encoding it embeds (see `index::persist`). A snapshot of another layout is ignored and
/// rebuilt.
pub(crate) const LAYOUT: &str = "mnemo-snapshot/7 parts/1 terms/2 windows/1 hnsw/2";

/// Where a part of `kind` comes when a snapshot is read: the segments, then the rows parts,
/// which fill the segments' rows, then a build's progress, which may take rows from them,
/// then the episodes parts.
pub(super) fn read_order(kind: u8) -> u8 {
    match kind {
        SEGMENT => 0,
        ROWS => 1,
        PROGRESS => 2,
        _ => 3,
    }
}

/// One stored part, as the head lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    pub id: u64,
    pub kind: u8,
    /// Episodes: the first id; segment: its serial; rows: the first seq; build progress: a
    /// merge's older segment's serial, or the first seq a seal's rows get.
    pub lo: u64,
    /// Episodes: the first id past the part; segment: 0; rows: the first seq past the part;
    /// build progress: a merge's newer segment's serial, or 0 for a seal.
    pub hi: u64,
    pub chunks: u32,
    pub len: u64,
    pub hash: u64,
}

/// A segment or rows part being written ahead of the head that will list it, a slice per
/// maintenance call ([`ahead`]). The head lists it as pending with its progress, so that its
/// chunks are known: after a restart they are deleted by the next snapshot write (the segment
/// itself was in memory only, and the namespace rebuilds its segments from the records, so
/// the same serial may name other rows), as they are when the segment is merged away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    pub id: u64,
    /// [`SEGMENT`], [`ROWS`] or [`PROGRESS`].
    pub kind: u8,
    /// As [`Part::lo`].
    pub lo: u64,
    /// As [`Part::hi`].
    pub hi: u64,
    /// Chunks written so far (`p/<id><0..chunks>`).
    pub chunks: u32,
    /// The part's whole length.
    pub total: u64,
    /// [`hash`] of the bytes written so far, which counts them.
    pub hasher: Hasher,
    /// Listed by the head a namespace was opened from: left by another run, to delete.
    pub orphan: bool,
}

impl Pending {
    /// All of the part is written: the next head may list it.
    pub fn complete(&self) -> bool {
        self.written() == self.total
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.hasher.len()
    }

    /// The part, as a head lists it once complete.
    fn part(&self) -> Part {
        let (id, kind, lo, hi, chunks, len) =
            (self.id, self.kind, self.lo, self.hi, self.chunks, self.written());
        Part { id, kind, lo, hi, chunks, len, hash: self.hasher.finish() }
    }

    /// Written ahead by this run (not an orphan) and whole.
    fn ready(&self) -> bool {
        self.complete() && !self.orphan
    }
}

/// Where the namespace's snapshot stands.
#[derive(Default)]
pub(crate) struct SnapState {
    /// Segment parts written ahead of the head, in the order they are written.
    pub pending: Vec<Pending>,
    /// First id the stored snapshot does not cover (0: no snapshot).
    pub watermark: u64,
    /// The stored parts, as the head lists them.
    pub parts: Vec<Part>,
    /// The id the next part gets.
    pub next_part: u64,
    /// Episodes below the watermark changed since their part was written (each has a marker
    /// in the store).
    pub dirty: FastSet,
    /// Episodes below the watermark whose access statistics changed since their part was
    /// written (each has an access entry in the store).
    pub accessed: FastSet,
    /// The vector keys the head lists as unsealed: the parts lack their rows (module docs).
    pub unsealed: Vec<u64>,
    /// The graph build in progress (as `VectorIndex::building` names it) waits while its
    /// progress is written ahead (module docs).
    pub store_progress: Option<(u64, u64)>,
}

impl SnapState {
    /// Whether a change to episode `id` needs a dirty marker in its batch.
    pub fn marks_dirty(&self, id: u64) -> bool {
        id < self.watermark && !self.dirty.contains(&id)
    }

    /// After the write that carried its marker: episode `id` differs from its part.
    pub fn mark_dirty(&mut self, id: u64) {
        if id < self.watermark {
            self.dirty.insert(id);
        }
    }

    /// After the write that carried its access entry: episode `id`'s statistics differ from
    /// its part's.
    pub fn mark_accessed(&mut self, id: u64) {
        if id < self.watermark {
            self.accessed.insert(id);
        }
    }

    /// Dirty markers past which the next snapshot is a full rewrite.
    fn dirty_limit(&self) -> usize {
        (self.watermark / 8).max(256) as usize
    }

    /// A full rewrite is due: too many dirty markers or access entries to read on open.
    fn full_due(&self) -> bool {
        self.dirty.len() > self.dirty_limit()
            || self.accessed.len() > (self.watermark / 2).max(256) as usize
    }

    /// True when a sealed segment of `serials` is not stored yet: a graph built since the
    /// last snapshot, which a restart would have to build again.
    pub fn lacks_segment(&self, serials: &[u64]) -> bool {
        serials.iter().any(|&s| self.segment_part(s).is_none())
    }

    /// True while `building`, the graph build in progress (`VectorIndex::building`), waits for
    /// its progress to be written: asked for, or being written ahead.
    pub fn storing_progress(&self, building: Option<(u64, u64)>) -> bool {
        let Some(build) = building else { return false };
        self.store_progress == Some(build)
            || self.pending.iter().any(|p| p.kind == PROGRESS && !p.orphan && (p.lo, p.hi) == build)
    }

    /// True when the stored snapshot has no episodes part: none was written yet (the head may
    /// list a build's progress alone), or none is usable.
    pub fn is_first(&self) -> bool {
        !self.parts.iter().any(|p| p.kind == EPISODES)
    }

    /// The stored part of the sealed segment whose serial is `serial`.
    fn segment_part(&self, serial: u64) -> Option<&Part> {
        self.parts.iter().find(|p| p.kind == SEGMENT && p.lo == serial)
    }

    /// The first seq past the rows the listed rows parts hold (0: none).
    pub fn rows_stored(&self) -> u64 {
        self.parts.iter().filter(|p| p.kind == ROWS).map(|p| p.hi).max().unwrap_or(0)
    }

    /// The first seq past the rows stored or being written ahead by this run.
    fn rows_covered(&self) -> u64 {
        let ahead = self.pending.iter().filter(|p| p.kind == ROWS && !p.orphan).map(|p| p.hi);
        ahead.fold(self.rows_stored(), u64::max)
    }

    /// True when each sealed segment of `vectors` has a stored part or one written ahead
    /// whole, and so has every row sealed: the next snapshot writes only its episodes part and
    /// head.
    pub fn segments_ready(&self, vectors: &VectorIndex) -> bool {
        let ready = |kind: u8, lo: u64| {
            self.pending.iter().any(|p| p.kind == kind && p.lo == lo && p.ready())
        };
        let (covered, next) = (self.rows_covered(), vectors.next_seq());
        let rows = (covered >= next || !vectors.holds_rows(covered, next))
            && self.pending.iter().filter(|p| p.kind == ROWS && !p.orphan).all(Pending::ready);
        rows && vectors
            .segment_serials()
            .iter()
            .all(|&s| self.segment_part(s).is_some() || ready(SEGMENT, s))
    }

    /// Changes the next snapshot would store: episodes past the watermark, and the dirty
    /// markers once a full rewrite is due to absorb them.
    pub fn pending(&self, next_id: u64) -> u64 {
        let markers = if self.full_due() { self.dirty.len() + self.accessed.len() } else { 0 };
        next_id.saturating_sub(self.watermark.max(1)) + markers as u64
    }
}

/// How a namespace's indexes were obtained when it was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// Rebuilt from the records: there was no snapshot, or `reason` says why it was not used.
    Rebuilt {
        /// Why an existing snapshot was ignored (`None`: there was none).
        reason: Option<String>,
    },
    /// Read from a snapshot of the ids below `watermark`, then `replayed` newer episodes and
    /// `refreshed` changed ones were read from their records.
    Snapshot {
        /// First id the snapshot does not cover.
        watermark: u64,
        /// Episodes at or above the watermark, indexed from their records.
        replayed: usize,
        /// Episodes changed after the snapshot, re-read from their records.
        refreshed: usize,
    },
}

/// A decoded snapshot.
pub(crate) struct Snapshot {
    pub watermark: u64,
    pub parts: Vec<Part>,
    pub pending: Vec<Pending>,
    pub next_part: u64,
    pub episodes: Episodes,
    pub bm25: Bm25,
    pub vectors: VectorIndex,
    /// The vector keys the head lists as unsealed (their rows are in `vectors`).
    pub unsealed: Vec<u64>,
}

/// The key of the dirty marker of episode `id`.
pub(crate) fn dirty_key(ns: &Namespace, id: u64) -> Vec<u8> {
    let mut k = ns.key(Table::Snapshot, b"d/");
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// The key of the access entry of episode `id`.
fn access_key(ns: &Namespace, id: u64) -> Vec<u8> {
    let mut k = ns.key(Table::Snapshot, b"a/");
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Adds to `batch` episode `id`'s access entry (module docs).
pub(crate) fn put_access(batch: &mut Batch, ns: &Namespace, id: u64, at: i64, count: u32) {
    let mut v = Vec::with_capacity(12);
    v.extend_from_slice(&at.to_le_bytes());
    v.extend_from_slice(&count.to_le_bytes());
    batch.put(access_key(ns, id), v);
}

pub(super) fn part_prefix(ns: &Namespace, part: u64) -> Vec<u8> {
    let mut k = ns.key(Table::Snapshot, b"p/");
    k.extend_from_slice(&part.to_be_bytes());
    k
}

fn chunk_key(ns: &Namespace, part: u64, i: u32) -> Vec<u8> {
    let mut k = part_prefix(ns, part);
    k.extend_from_slice(&i.to_be_bytes());
    k
}

/// A 64-bit checksum, four lanes of multiply-rotate over 8-byte words: any change of one word
/// changes the result, and it runs at memory speed in wasm too (CRC32 does not, without
/// carry-less multiply). [`Hasher`] computes it over bytes that arrive in pieces.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let mut h = Hasher::new();
    h.update(bytes);
    h.finish()
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(K).rotate_left(29)
}

/// [`hash`] of bytes that arrive in pieces: whole 32-byte blocks feed the four lanes (a block
/// split between pieces waits in `block`); the length and the last bytes short of a block are
/// mixed in at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hasher {
    lanes: [u64; 4],
    block: [u8; 32],
    filled: usize,
    len: u64,
}

impl Hasher {
    pub fn new() -> Self {
        Hasher { lanes: [1, 2, 3, 4], block: [0; 32], filled: 0, len: 0 }
    }

    /// Bytes hashed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.filled > 0 {
            let n = (32 - self.filled).min(bytes.len());
            self.block[self.filled..self.filled + n].copy_from_slice(&bytes[..n]);
            self.filled += n;
            bytes = &bytes[n..];
            if self.filled < 32 {
                return;
            }
            let block = self.block;
            self.blocks(&block);
            self.filled = 0;
        }
        let whole = bytes.len() / 32 * 32;
        self.blocks(&bytes[..whole]);
        let rest = &bytes[whole..];
        self.block[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    fn blocks(&mut self, bytes: &[u8]) {
        for block in bytes.chunks_exact(32) {
            for (lane, word) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
                let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
                *lane = mix(*lane, w);
            }
        }
    }

    /// Appends the state (`lanes:u64×4 tail:bytes`; the length is the part's `len`).
    fn encode(&self, w: &mut Writer) {
        for lane in self.lanes {
            w.u64(lane);
        }
        w.bytes(&self.block[..self.filled]);
    }

    /// Reads what [`Hasher::encode`] wrote, for `len` bytes hashed.
    fn decode(r: &mut Reader, len: u64) -> Result<Self> {
        let lanes = [r.u64()?, r.u64()?, r.u64()?, r.u64()?];
        let tail = r.bytes()?;
        if tail.len() >= 32 || tail.len() as u64 != len % 32 {
            return Err(r.corrupt(format!("a hash state of {} bytes after {len}", tail.len())));
        }
        let mut block = [0; 32];
        block[..tail.len()].copy_from_slice(tail);
        Ok(Hasher { lanes, block, filled: tail.len(), len })
    }

    pub fn finish(&self) -> u64 {
        let mut h = self.len;
        for lane in self.lanes {
            h = mix(h, lane);
        }
        for &b in &self.block[..self.filled] {
            h = mix(h, u64::from(b));
        }
        h ^ (h >> 32)
    }
}

/// The dirty markers and access entries of a namespace's snapshot ([`markers`]).
#[derive(Debug, Default)]
pub(crate) struct Markers {
    /// Episodes to read again from their records: those with a dirty marker, and those whose
    /// access entry is damaged (the record holds the statistics the entry should have given).
    pub dirty: Vec<u64>,
    /// Access entries: (episode id, last access, access count).
    pub accessed: Vec<(u64, i64, u32)>,
    /// Episodes whose access entry is damaged (also in `dirty`): the next full rewrite
    /// deletes the entry.
    pub damaged: Vec<u64>,
    /// Why the snapshot cannot be used: a marker or entry whose key names no episode, so which
    /// episode differs from its part is unknown. The namespace is then rebuilt from its
    /// records, and its first snapshot deletes every marker and entry ([`stale_keys`]).
    pub unusable: Option<String>,
}

/// Reads `ns`'s dirty markers (`d/<id>`) and access entries (`a/<id>`: last access i64 LE,
/// count u32 LE). Nothing damaged fails the read: see [`Markers`].
pub(crate) fn markers(store: &impl KvStore, ns: &Namespace) -> Result<Markers> {
    let mut m = Markers::default();
    let id_of = |prefix: &[u8], k: &[u8]| -> Option<u64> {
        Some(u64::from_be_bytes(k.get(prefix.len()..)?.try_into().ok()?))
    };
    let prefix = ns.key(Table::Snapshot, b"d/");
    scan_all(store, &prefix, None, |k, _| {
        match id_of(&prefix, k) {
            Some(id) => m.dirty.push(id),
            None => {
                let why = format!("a dirty marker whose key has {} bytes", k.len());
                m.unusable.get_or_insert(why);
            }
        }
        Ok(())
    })?;
    let prefix = ns.key(Table::Snapshot, b"a/");
    scan_all(store, &prefix, None, |k, v| {
        let at: Option<[u8; 8]> = v.get(..8).and_then(|b| b.try_into().ok());
        let count: Option<[u8; 4]> = v.get(8..).and_then(|b| b.try_into().ok());
        match (id_of(&prefix, k), at, count) {
            (Some(id), Some(at), Some(count)) => {
                m.accessed.push((id, i64::from_le_bytes(at), u32::from_le_bytes(count)))
            }
            (Some(id), ..) => {
                m.dirty.push(id);
                m.damaged.push(id);
            }
            (None, ..) => {
                let why = format!("an access entry whose key has {} bytes", k.len());
                m.unusable.get_or_insert(why);
            }
        }
        Ok(())
    })?;
    m.dirty.sort_unstable();
    m.dirty.dedup();
    Ok(m)
}

/// What a snapshot holds, borrowed from a loaded namespace.
pub(crate) struct Parts<'a> {
    pub bm25: &'a Bm25,
    pub vectors: &'a VectorIndex,
    pub episodes: &'a Episodes,
    /// The namespace's next episode id: the new snapshot's watermark.
    pub next_id: u64,
    /// The bits of a BM25 document or vector key that hold its episode's id (the bits above
    /// name a window of a long text: `engine::index_keys::passage_key`).
    pub id_mask: u64,
}

/// A snapshot write: the batch, and the state once it is stored.
pub(crate) struct Written {
    pub batch: Batch,
    pub watermark: u64,
    pub parts: Vec<Part>,
    pub next_part: u64,
    /// A full rewrite: every dirty marker and access entry was deleted.
    pub full: bool,
    /// The vector keys the head lists as unsealed.
    pub unsealed: Vec<u64>,
    /// Bytes of the parts written.
    pub bytes: usize,
    /// The build's progress, asked for, was written whole.
    pub progress_stored: bool,
}

/// The first part id past every part id of the chunk `keys` ([`stale_keys`]): a namespace
/// numbers its new parts from there, so that what it writes ahead of its first snapshot is
/// never among the keys that snapshot deletes.
pub(crate) fn past_part_ids(ns: &Namespace, keys: &[Vec<u8>]) -> u64 {
    let prefix = ns.key(Table::Snapshot, b"p/");
    keys.iter()
        .filter_map(|k| k.strip_prefix(&prefix[..])?.get(..8)?.try_into().ok())
        .map(|id: [u8; 8]| u64::from_be_bytes(id).saturating_add(1))
        .max()
        .unwrap_or(0)
}

/// Keys of snapshot chunks no head lists: when a namespace has no usable snapshot (none, a
/// damaged one, or one of an older layout, whose chunks were under `c/`), its first snapshot
/// deletes whatever chunks are left, so no part id is reused over old chunks — except those of
/// the parts `keep` names: those it is writing ahead, and a build's progress listed already.
pub(crate) fn stale_keys(
    store: &impl KvStore,
    ns: &Namespace,
    keep: impl Iterator<Item = u64>,
) -> Result<Vec<Vec<u8>>> {
    let keep: Vec<Vec<u8>> = keep.map(|id| part_prefix(ns, id)).collect();
    let mut keys = Vec::new();
    // Chunks, and the markers and access entries of the snapshot set aside.
    for prefix in [&b"c/"[..], b"p/", b"d/", b"a/"] {
        scan_pages(store, &ns.key(Table::Snapshot, prefix), None, CHUNKS_PER_PAGE, &mut |k, _| {
            if !keep.iter().any(|p| k.starts_with(p)) {
                keys.push(k.to_vec());
            }
            Ok(())
        })?;
    }
    Ok(keys)
}

/// The batch that brings `ns`'s snapshot (described by `snap`) up to `parts` (module docs:
/// incremental, or full when due), first deleting the `stale` keys ([`stale_keys`]).
pub(crate) fn batch(
    parts: Parts,
    snap: &SnapState,
    ns: &Namespace,
    chunk_size: usize,
    stale: Vec<Vec<u8>>,
) -> Result<Written> {
    let episode_parts = snap.parts.iter().filter(|p| p.kind == EPISODES).count();
    let full = episode_parts == 0 || snap.full_due() || episode_parts >= MAX_EPISODE_PARTS;
    let mut batch = Batch::new();
    for k in stale {
        batch.delete(k);
    }
    let mut next_part = snap.next_part.max(1);
    let mut bytes = 0;
    let mut put_part = |batch: &mut Batch, kind: u8, lo: u64, hi: u64, blob: Vec<u8>| {
        let id = next_part;
        next_part += 1;
        let mut chunks = 0u32;
        for piece in blob.chunks(chunk_size.max(1)) {
            batch.put(chunk_key(ns, id, chunks), piece.to_vec());
            chunks += 1;
        }
        bytes += blob.len();
        Part { id, kind, lo, hi, chunks, len: blob.len() as u64, hash: hash(&blob) }
    };
    let delete_part = |batch: &mut Batch, p: &Part| delete_chunks(batch, ns, p.id, p.chunks);
    let mut kept = Vec::new();
    let lo = if full { 0 } else { snap.watermark };
    for p in snap.parts.iter().filter(|p| p.kind == EPISODES) {
        if full {
            delete_part(&mut batch, p);
        } else {
            kept.push(p.clone());
        }
    }
    if full {
        for &id in &snap.dirty {
            batch.delete(dirty_key(ns, id));
        }
        for &id in &snap.accessed {
            batch.delete(access_key(ns, id));
        }
    }
    if parts.next_id > lo || full {
        let blob = episodes_part(&parts, lo, parts.next_id)?;
        kept.push(put_part(&mut batch, EPISODES, lo, parts.next_id, blob));
    }
    let vectors = parts.vectors;
    let serials = vectors.segment_serials();
    for p in snap.parts.iter().filter(|p| p.kind == SEGMENT) {
        if !serials.contains(&p.lo) {
            delete_part(&mut batch, p);
        }
    }
    // Parts written ahead: listed when complete and still wanted, else their chunks go.
    let mut ready = Vec::new();
    for p in &snap.pending {
        let wanted = match p.kind {
            SEGMENT => serials.contains(&p.lo),
            ROWS => vectors.holds_rows(p.lo, p.hi),
            _ => false, // build progress is listed by the call that completes it, or below
        };
        if p.ready() && wanted {
            ready.push(p.part());
        } else {
            delete_chunks(&mut batch, ns, p.id, p.chunks);
        }
    }
    for serial in serials {
        let stored = snap.segment_part(serial);
        match stored.or_else(|| ready.iter().find(|p| p.kind == SEGMENT && p.lo == serial)) {
            Some(p) => kept.push(p.clone()),
            None => {
                let mut w = Writer::new();
                vectors.encode_segment(serial, &mut w)?;
                kept.push(put_part(&mut batch, SEGMENT, serial, 0, w.finish()));
            }
        }
    }
    // Rows parts: kept while a segment holds one of their rows; the rows sealed since the
    // last one are written in a new one.
    // A part whose rows are mostly gone (removed vectors that merges dropped) is written again
    // with the rest, so stored rows follow the live ones.
    let mut rows_hi = snap.rows_stored();
    let row_len = 4 + vectors.dim() as u64;
    for p in snap.parts.iter().filter(|p| p.kind == ROWS) {
        let live = vectors.rows_held(p.lo, p.hi) as u64;
        if live == 0 {
            delete_part(&mut batch, p);
        } else if live * 2 < p.len.saturating_sub(4) / row_len {
            delete_part(&mut batch, p);
            let mut w = Writer::new();
            vectors.encode_rows_part(p.lo, p.hi, &mut w);
            kept.push(put_part(&mut batch, ROWS, p.lo, p.hi, w.finish()));
        } else {
            kept.push(p.clone());
        }
    }
    // Those written ahead go on from the listed ones, each from where the one before ends.
    let mut ahead: Vec<&Part> = ready.iter().filter(|p| p.kind == ROWS).collect();
    ahead.sort_by_key(|p| p.lo);
    for p in ahead {
        if p.lo == rows_hi {
            rows_hi = p.hi;
            kept.push(p.clone());
        } else {
            delete_chunks(&mut batch, ns, p.id, p.chunks);
        }
    }
    if vectors.next_seq() > rows_hi && vectors.holds_rows(rows_hi, vectors.next_seq()) {
        let mut w = Writer::new();
        vectors.encode_rows_part(rows_hi, vectors.next_seq(), &mut w);
        kept.push(put_part(&mut batch, ROWS, rows_hi, vectors.next_seq(), w.finish()));
    }
    // A build's progress stays listed while the build goes on; when it is asked for, it is
    // written whole here, in place of the one before.
    let building = vectors.building();
    let progress_stored = building.is_some() && snap.store_progress == building;
    for p in snap.parts.iter().filter(|p| p.kind == PROGRESS) {
        if building == Some((p.lo, p.hi)) && !progress_stored {
            kept.push(p.clone());
        } else {
            delete_part(&mut batch, p);
        }
    }
    if let Some((lo, hi)) = building.filter(|_| progress_stored) {
        let mut w = Writer::new();
        vectors.encode_progress(&mut w);
        kept.push(put_part(&mut batch, PROGRESS, lo, hi, w.finish()));
    }
    let unsealed = vectors.unsealed_ids();
    let record = head(parts.next_id, next_part, &kept, &[], &unsealed);
    batch.put(ns.key(Table::Snapshot, b"head"), record);
    Ok(Written {
        batch,
        watermark: parts.next_id,
        parts: kept,
        next_part,
        full,
        bytes,
        unsealed,
        progress_stored,
    })
}

/// Adds to `batch` the deletion of part `id`'s first `chunks` chunks.
fn delete_chunks(batch: &mut Batch, ns: &Namespace, id: u64, chunks: u32) {
    for i in 0..chunks {
        batch.delete(chunk_key(ns, id, i));
    }
}

/// The head record of a snapshot of the ids below `watermark` made of `parts`, with
/// `pending` segment parts written ahead and the `unsealed` vector keys (module docs).
fn head(
    watermark: u64,
    next_part: u64,
    parts: &[Part],
    pending: &[Pending],
    unsealed: &[u64],
) -> Vec<u8> {
    let mut head = Writer::new();
    head.str(LAYOUT).u64(watermark).u64(next_part).u32(parts.len() as u32);
    for p in parts {
        head.u64(p.id).u8(p.kind).u64(p.lo).u64(p.hi).u32(p.chunks).u64(p.len).u64(p.hash);
    }
    head.u32(pending.len() as u32);
    for p in pending {
        head.u64(p.id).u8(p.kind).u64(p.lo).u64(p.hi);
        head.u32(p.chunks).u64(p.written()).u64(p.total);
        p.hasher.encode(&mut head);
    }
    put_runs(&mut head, unsealed);
    seal(HEAD_KIND, &head.finish())
}

/// Appends `keys` as runs of consecutive keys (`runs:u32 run×runs`, module docs).
pub(crate) fn put_runs(w: &mut Writer, keys: &[u64]) {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &k in keys {
        match runs.last_mut() {
            Some((first, len)) if first.checked_add(*len) == Some(k) => *len += 1,
            _ => runs.push((k, 1)),
        }
    }
    w.u32(runs.len() as u32);
    for (first, len) in runs {
        w.var(first).var(len);
    }
}

/// Reads what [`put_runs`] wrote: the keys, in order. More keys than the `watermark` ids
/// can have vectors (each its whole text's and at most `MAX_PASSAGES` passages') are refused.
pub(super) fn read_runs(r: &mut Reader, watermark: u64) -> Result<Vec<u64>> {
    let runs = r.u32()? as usize;
    let limit = watermark.saturating_mul(MAX_PASSAGES as u64 + 1);
    let mut keys: Vec<u64> = Vec::new();
    for _ in 0..runs {
        let (first, len) = (r.var()?, r.var()?);
        let past = first.checked_add(len);
        let Some(past) = past.filter(|_| (keys.len() as u64).saturating_add(len) <= limit) else {
            return Err(r.corrupt(format!("a run of {len} unsealed keys from {first}")));
        };
        let room = usize::try_from(len).ok().filter(|&n| keys.try_reserve(n).is_ok());
        if room.is_none() {
            return Err(r.corrupt(format!("{len} unsealed keys: not enough memory to read them")));
        }
        keys.extend(first..past);
    }
    Ok(keys)
}

/// Reads the pending entries of a head (module docs), after its parts: orphans of the run that
/// wrote them.
pub(super) fn read_pending(r: &mut Reader) -> Result<Vec<Pending>> {
    let n = r.u32()? as usize;
    let mut pending = Vec::with_capacity(n.min(r.remaining() / 81));
    for _ in 0..n {
        let (id, kind, lo, hi) = (r.u64()?, r.u8()?, r.u64()?, r.u64()?);
        let (chunks, len, total) = (r.u32()?, r.u64()?, r.u64()?);
        if len > total {
            return Err(r.corrupt(format!("pending part {id}: {len} of {total} bytes")));
        }
        let hasher = Hasher::decode(r, len)?;
        pending.push(Pending { id, kind, lo, hi, chunks, total, hasher, orphan: true });
    }
    Ok(pending)
}

/// A slice of segment parts written ahead of the head ([`ahead`]), and the state once stored.
pub(crate) struct Ahead {
    pub batch: Batch,
    pub pending: Vec<Pending>,
    /// The parts the head lists: as before, unless this slice completed a build's progress,
    /// which it lists in place of the one before.
    pub parts: Vec<Part>,
    /// This slice completed the build's progress.
    pub progress_stored: bool,
    pub next_part: u64,
    /// Bytes of chunks written.
    pub bytes: usize,
}

/// The batch that writes about `allowance` bytes (whole chunks, at least one) of the sealed
/// segments that have no stored part yet and of the rows sealed since the last rows part,
/// going on with the parts already written ahead, and rewrites the head with their progress;
/// it also deletes the chunks of parts written ahead for segments merged away since. `None`
/// when there is nothing to write. A large first snapshot is thus spread over maintenance
/// calls: no call holds or writes a whole segment or rows part, and the call that writes the
/// head writes only the episodes part. The rows of a part written ahead stay put meanwhile:
/// the index keeps every row not stored yet through merges (`rows_stored_below`).
pub(crate) fn ahead(
    vectors: &VectorIndex,
    snap: &SnapState,
    ns: &Namespace,
    chunk_size: usize,
    allowance: usize,
) -> Result<Option<Ahead>> {
    let serials = vectors.segment_serials();
    let stored = |serial: u64| snap.segment_part(serial).is_some();
    let mut batch = Batch::new();
    let mut pending = Vec::new();
    for p in &snap.pending {
        let wanted = match p.kind {
            SEGMENT => serials.contains(&p.lo) && !stored(p.lo),
            ROWS => p.lo >= snap.rows_stored(),
            _ => vectors.building() == Some((p.lo, p.hi)),
        };
        if wanted && !p.orphan {
            pending.push(p.clone());
        } else {
            delete_chunks(&mut batch, ns, p.id, p.chunks);
        }
    }
    // What to write, in order: the segments without a part, then the rows not stored.
    let mut todo: Vec<(u8, u64, u64)> =
        serials.iter().filter(|&&s| !stored(s)).map(|&s| (SEGMENT, s, 0)).collect();
    let mut rows: Vec<(u64, u64)> =
        pending.iter().filter(|p| p.kind == ROWS).map(|p| (p.lo, p.hi)).collect();
    rows.sort_unstable();
    let covered = rows.last().map_or(snap.rows_stored(), |r| r.1);
    if vectors.next_seq() > covered && vectors.holds_rows(covered, vectors.next_seq()) {
        rows.push((covered, vectors.next_seq()));
    }
    todo.extend(rows.into_iter().map(|(lo, hi)| (ROWS, lo, hi)));
    // Then the build's progress, when asked for or being written.
    let building = vectors.building();
    let progress = snap.storing_progress(building);
    if let Some((lo, hi)) = building.filter(|_| progress) {
        todo.push((PROGRESS, lo, hi));
    }
    let len = |kind: u8, lo: u64, hi: u64| match kind {
        SEGMENT => vectors.segment_len(lo),
        ROWS => Some(vectors.rows_part_len(lo, hi)),
        _ => vectors.progress_len(),
    };
    let chunk = chunk_size.max(1);
    let (mut next_part, mut left, mut bytes) = (snap.next_part.max(1), allowance, 0);
    for (kind, lo, hi) in todo {
        if left == 0 {
            break;
        }
        let i = match pending.iter().position(|p| p.kind == kind && p.lo == lo) {
            Some(i) => i,
            None => {
                let Some(total) = len(kind, lo, hi) else { continue };
                let (chunks, total, hasher, orphan) = (0, total as u64, Hasher::new(), false);
                let id = next_part;
                pending.push(Pending { id, kind, lo, hi, chunks, total, hasher, orphan });
                next_part += 1;
                pending.len() - 1
            }
        };
        let p = &mut pending[i];
        let rest = (p.total - p.written()) as usize;
        let take = rest.min(left.div_ceil(chunk) * chunk);
        if take == 0 {
            continue;
        }
        let at = p.written() as usize;
        let slice = match kind {
            SEGMENT => vectors.segment_slice(lo, at, take),
            ROWS => Some(vectors.rows_part_slice(lo, hi, at, take)),
            _ => vectors.progress_slice(at, take),
        };
        let Some(slice) = slice else { continue };
        for piece in slice.chunks(chunk) {
            batch.put(chunk_key(ns, p.id, p.chunks), piece.to_vec());
            p.chunks += 1;
        }
        p.hasher.update(&slice);
        bytes += slice.len();
        left = left.saturating_sub(slice.len());
    }
    if batch.is_empty() {
        return Ok(None);
    }
    // A build's progress written whole is listed at once, in place of the one before: the
    // segments a merge names are listed already (the build waited for them).
    let mut parts = snap.parts.clone();
    let done = pending.iter().position(|p| p.kind == PROGRESS && p.complete());
    let progress_stored = done.is_some();
    if let Some(i) = done {
        for p in parts.iter().filter(|p| p.kind == PROGRESS) {
            delete_chunks(&mut batch, ns, p.id, p.chunks);
        }
        parts.retain(|p| p.kind != PROGRESS);
        parts.push(pending.remove(i).part());
    }
    let record = head(snap.watermark, next_part, &parts, &pending, &snap.unsealed);
    batch.put(ns.key(Table::Snapshot, b"head"), record);
    Ok(Some(Ahead { batch, pending, parts, progress_stored, next_part, bytes }))
}

/// The bytes of an episodes part for ids in `[lo, hi)`.
fn episodes_part(parts: &Parts, lo: u64, hi: u64) -> Result<Vec<u8>> {
    let mut w = Writer::new();
    let mut section = Writer::new();
    parts.bm25.encode_range(&mut section, (lo, hi), parts.id_mask);
    w.bytes(&section.finish());
    let mut hots: Vec<Hot> =
        parts.episodes.hots().iter().filter(|h| (lo..hi).contains(&h.id)).cloned().collect();
    hots.sort_unstable_by_key(|h| h.id);
    let mut records = Vec::new();
    w.u32(hots.len() as u32);
    let (mut id, mut created) = (lo, 0i64);
    for block in hots.chunks(HOTS_PER_BLOCK) {
        let mut b = Writer::new();
        for h in block {
            let record = parts.episodes.record(h.id).expect("listed above");
            b.var(h.id - id).zvar(h.created_at.wrapping_sub(created));
            b.zvar(h.last_accessed_at.wrapping_sub(h.created_at)).var(u64::from(h.access_count));
            b.f32(h.importance).u8(h.tier).u8(status_code(h.status));
            b.zvar(h.expires_at).u8(u8::from(h.cold)).var(record.len() as u64);
            records.extend_from_slice(&record);
            (id, created) = (h.id, h.created_at);
        }
        w.bytes(&b.finish());
    }
    w.bytes(&records);
    Ok(w.finish())
}

/// The watermark of `ns`'s snapshot as its head states it (`None`: no head, or one of another
/// layout or unreadable; the parts are not checked here).
pub(crate) fn watermark(store: &impl KvStore, ns: &Namespace) -> Result<Option<u64>> {
    let Some(head) = store.get(&ns.key(Table::Snapshot, b"head"))? else { return Ok(None) };
    let Ok(payload) = open(&head, HEAD_KIND, "snapshot head") else { return Ok(None) };
    let mut r = Reader::new(payload, "snapshot head");
    Ok(match r.str() {
        Ok(layout) if layout == LAYOUT => r.u64().ok(),
        _ => None,
    })
}

#[cfg(test)]
pub(crate) use super::feed::{decode, stored};
pub(crate) use super::feed::{read, Feed, Reading};
