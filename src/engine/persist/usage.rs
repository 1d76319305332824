//! Access statistics without writes on the read path.
//!
//! A recall that is shown to the model (`touch`) raises its hits' `last_accessed_at` and
//! `access_count`. Those updates used to rewrite every returned episode record, plus a
//! snapshot dirty marker for each: k records written per read. Now a recall writes one small
//! record, the retrieval log entry that outcome tracking needs anyway (`record::outcome`), and
//! the statistics are derived from it:
//!
//! - in memory, the hits' statistics change at once, so scores are exactly what they were when
//!   every recall rewrote its records;
//! - in the store, the episode records are brought up to date later, all pending ones in one
//!   go ("folding"), inside the next batch that writes episode records anyway (a status
//!   change, compaction, a snapshot), or once [`FOLD_AFTER`] retrievals have accumulated;
//! - when a namespace is opened, the retrievals not yet folded are applied again.
//!
//! Nothing is ever lost: a retrieval record is written atomically with nothing else to wait
//! for, and one that was not folded is replayed on open. Opening reads at most
//! [`FOLD_AFTER`] retrieval records more than before.
//!
//! An erasure or a correction needs no fold: it takes the episode out of every retrieval
//! record, so the statistics its record carries are never replayed onto it again.
//!
//! The fold mark (`Table::Meta/usage`, kind 15: `folded:u64`) says which retrievals are in the
//! records already: every one with an id below `folded`. Retrieval ids grow with time
//! (`ms << 10 | seq`), so a recall whose id falls below the mark (the host's clock went back)
//! is folded in its own batch, at once. A namespace without the mark (written before this
//! scheme, or that never had a retrieval) has all its retrievals folded: the mark is written
//! with its first retrieval.

use super::snapshot::{put_access, SnapState};
use crate::engine::episodes::Episodes;
use crate::error::Result;
use crate::index::FastSet;
use crate::record::outcome::Retrieval;
use crate::record::Episode;
use crate::store::codec::{open, seal, Reader, Writer};
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};

const KIND: u8 = 15;
/// Retrievals left unfolded before the recall that adds one more folds them all: bounds the
/// replay on open and the size of the pending set.
pub(crate) const FOLD_AFTER: u32 = 1024;

/// Where a namespace's access statistics stand against its stored episode records.
#[derive(Default)]
pub(crate) struct Usage {
    /// Retrievals with ids below this are in the records (`None`: no mark stored yet).
    pub folded: Option<u64>,
    /// Episodes whose statistics in memory are ahead of their stored records.
    pub pending: FastSet,
    /// Retrievals logged since the mark.
    pub unfolded: u32,
    /// The largest retrieval id logged (stored or replayed).
    pub last: u64,
}

fn key(ns: &Namespace) -> Vec<u8> {
    ns.key(Table::Meta, b"usage")
}

fn encode(folded: u64) -> Vec<u8> {
    let mut w = Writer::new();
    w.u64(folded);
    seal(KIND, &w.finish())
}

fn decode(bytes: &[u8]) -> Result<u64> {
    let mut r = Reader::new(open(bytes, KIND, "access fold mark")?, "access fold mark");
    let folded = r.u64()?;
    r.end()?;
    Ok(folded)
}

/// Raises episode `id`'s statistics in memory as one retrieval at `at` does; false when the
/// namespace no longer holds it (erased).
fn apply(episodes: &mut Episodes, id: u64, at: i64) -> Result<bool> {
    let Some(e) = episodes.get(id)? else { return Ok(false) };
    let mut e = e.into_owned();
    raise(&mut e, at);
    episodes.insert(e);
    Ok(true)
}

/// On open: reads the fold mark and applies every retrieval at or above it.
pub(crate) fn replay(
    store: &impl KvStore,
    ns: &Namespace,
    usage: &mut Usage,
    episodes: &mut Episodes,
) -> Result<()> {
    let Some(mark) = store.get(&key(ns))? else { return Ok(()) };
    let folded = decode(&mark)?;
    usage.folded = Some(folded);
    usage.last = folded.saturating_sub(1);
    let prefix = ns.table_prefix(Table::Retrieval);
    let after = folded.checked_sub(1).map(|p| ns.key(Table::Retrieval, &p.to_be_bytes()));
    scan_all(store, &prefix, after, |k, v| {
        let id = k.get(prefix.len()..).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes);
        let r = Retrieval::decode(v)?;
        for &e in &r.episodes {
            if apply(episodes, e, r.at)? {
                usage.pending.insert(e);
            }
        }
        usage.unfolded += 1;
        usage.last = usage.last.max(id.unwrap_or(0));
        Ok(())
    })
}

/// What a recall's batch carries for access statistics, kept until the batch is stored.
pub(crate) struct Staged {
    /// The hits with their statistics raised.
    touched: Vec<Episode>,
    /// The retrieval's id.
    id: u64,
    /// The batch folds everything pending.
    fold: bool,
}

/// Adds to `batch` (which holds retrieval `id` at `at`, returning `used`) what must be stored
/// with it: the fold mark when there is none yet, or a fold of everything pending when this
/// retrieval cannot wait (its id is below the mark: the clock went back) or [`FOLD_AFTER`]
/// are waiting. Nothing changes in memory until [`commit`], once the batch is stored.
pub(crate) fn stage(
    (usage, episodes, snap): (&Usage, &Episodes, &SnapState),
    ns: &Namespace,
    (id, at): (u64, i64),
    used: &[u64],
    batch: &mut Batch,
) -> Result<Staged> {
    let mut touched = Vec::with_capacity(used.len());
    for &e in used {
        if let Some(e) = episodes.get(e)? {
            let mut e = e.into_owned();
            raise(&mut e, at);
            touched.push(e);
        }
    }
    let fold = match usage.folded {
        None => {
            // Everything logged before is in the records already (before this scheme every
            // recall rewrote them): this retrieval is the first one to replay.
            batch.put(key(ns), encode(id));
            false
        }
        Some(mark) => id < mark || usage.unfolded >= FOLD_AFTER,
    };
    if fold {
        let mine: FastSet = touched.iter().map(|e| e.id).collect();
        let others = usage.pending.iter().copied().filter(|e| !mine.contains(e));
        put_records(episodes, snap, ns, others, true, batch);
        for e in &touched {
            put_record(snap, ns, e, true, batch);
        }
        batch.put(key(ns), encode(usage.last.max(id).saturating_add(1)));
    }
    Ok(Staged { touched, id, fold })
}

/// After the batch [`stage`] filled was stored: the hits' new statistics in memory.
pub(crate) fn commit(
    (usage, episodes, snap): (&mut Usage, &mut Episodes, &mut SnapState),
    staged: Staged,
) {
    for e in staged.touched {
        usage.pending.insert(e.id);
        episodes.insert(e);
    }
    usage.unfolded += 1;
    usage.last = usage.last.max(staged.id);
    if usage.folded.is_none() {
        usage.folded = Some(staged.id);
    }
    if staged.fold {
        folded(usage, snap);
    }
}

fn raise(e: &mut Episode, at: i64) {
    e.last_accessed_at = e.last_accessed_at.max(at);
    e.access_count = e.access_count.saturating_add(1);
}

/// Adds `e`'s record to `batch`, with its snapshot access entry when `markers` and the
/// snapshot holds an older one (its statistics are all that changed).
fn put_record(snap: &SnapState, ns: &Namespace, e: &Episode, markers: bool, batch: &mut Batch) {
    batch.put(ns.key(Table::Episode, &e.id.to_be_bytes()), e.encode());
    if markers && e.id < snap.watermark {
        put_access(batch, ns, e.id, e.last_accessed_at, e.access_count);
    }
}

fn put_records(
    episodes: &Episodes,
    snap: &SnapState,
    ns: &Namespace,
    ids: impl Iterator<Item = u64>,
    markers: bool,
    batch: &mut Batch,
) {
    let mut ids: Vec<u64> = ids.collect();
    ids.sort_unstable();
    for id in ids {
        // A pending episode is held decoded (`commit`, `apply`): this never decodes.
        if let Ok(Some(e)) = episodes.get(id) {
            put_record(snap, ns, &e, markers, batch);
        }
    }
}

/// Adds to `batch` every pending episode's record (with its snapshot access entry) and a fold
/// mark past every retrieval logged. Any batch that writes an episode record from memory must
/// fold first, or the retrievals it already counts would be counted again on the next open.
/// `markers`: whether the records need snapshot access entries (not when the same batch writes
/// a snapshot of them). Call [`folded`] once the batch is stored.
pub(crate) fn fold(
    usage: &Usage,
    episodes: &Episodes,
    snap: &SnapState,
    ns: &Namespace,
    batch: &mut Batch,
    markers: bool,
) {
    if usage.pending.is_empty() && usage.unfolded == 0 {
        return;
    }
    put_records(episodes, snap, ns, usage.pending.iter().copied(), markers, batch);
    batch.put(key(ns), encode(usage.last.saturating_add(1)));
}

/// After the batch [`fold`] filled was stored.
pub(crate) fn folded(usage: &mut Usage, snap: &mut SnapState) {
    if usage.pending.is_empty() && usage.unfolded == 0 {
        return;
    }
    for id in std::mem::take(&mut usage.pending) {
        snap.mark_accessed(id);
    }
    usage.unfolded = 0;
    usage.folded = Some(usage.last.saturating_add(1));
}
