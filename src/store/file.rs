//! [`FileStore`]: a durable backend for native and wasmtime hosts, as one append-only log file.
//!
//! ## Byte format of `mnemo.log` (all integers little-endian)
//!
//! ```text
//! log     := record*
//! record  := "MNL1" payload_len:u32 len_crc:u32 crc32:u32 payload
//!            (len_crc = crc32 IEEE of the 4 payload_len bytes; crc32 = of the payload)
//! payload := op_count:u32 op*
//! op      := 0x01 key_len:u32 key value_len:u32 value       (put)
//!          | 0x02 key_len:u32 key                            (delete)
//! ```
//!
//! One record is one [`Batch`]. `write` appends the record and `fsync`s before it returns, so
//! an acknowledged batch is on disk. On open the log is replayed into memory:
//!
//! - A last record **shorter than its header says** (or a header cut short, or a tail of zeros
//!   the file system added) is a write that never completed: a crash. It is left in the file
//!   until the next write, which copies it into `mnemo.damaged` and cuts it off before
//!   appending; a read-only command never changes the log.
//! - Any other record that cannot be read — failing its checksum (the last one included: a
//!   record as long as its header says is not a torn write), a damaged header, a payload that
//!   does not decode — is **damage**: it is skipped, reported ([`FileStore::damage`], and
//!   through [`KvStore::damage`] in the engine's `quarantined` list) and kept byte for byte.
//!   After a damaged header, reading resumes at the next position holding a whole record with
//!   valid checksums. One bad record never makes the store unopenable; what it held is
//!   missing until it is restored from a backup or an export.
//!
//! When the log grows past twice the live data (and at least 1 MiB past it), it is rewritten as
//! one record into `mnemo.log.tmp` and renamed over the log; [`KvStore::vacuum`] does the same
//! on demand, so deleted values leave the file (erasure). Before a rewrite drops damaged bytes
//! from the log they are appended to `mnemo.damaged` (the engine cannot read them, so erasure
//! cannot find a subject in them either: inspect that file, then delete it):
//!
//! ```text
//! damaged := ("MNDG" at:u64 len:u64 bytes[len])*     (at: the bytes' offset in the log then)
//! ```
//!
//! Files are this store's own: the log, the lock, the rewrite's temporary file and
//! `mnemo.damaged` are created readable and writable by the owner only (0600 on Unix); the
//! temporary file is created exclusively (an existing file or symbolic link of that name is
//! removed, never written through), and a log that is a symbolic link is refused.
//!
//! Faults, and what each leaves behind:
//!
//! - An append that fails part-way (a full disk) is cut off again before `write` returns its
//!   error, so the next append never lands behind a partial record. If even that fails, the
//!   store refuses further writes until it is reopened (reopening drops the torn tail).
//! - A compaction that fails after the batch was appended and synced does not fail the write
//!   (it happened); compaction is retried once the log has grown another MiB.
//! - One process at a time: `open` takes an exclusive lock on `mnemo.lock` (released when the
//!   store is dropped or the process ends); a second opener gets [`Error::Locked`].
//! - A long-lived process that wants to leave the store to others between its requests (the MCP
//!   server) [`FileStore::release`]s the lock and [`FileStore::reacquire`]s it: the log is only
//!   ever appended to or renamed over, so an unchanged length, modification time and file
//!   identity mean nobody wrote in between and the loaded state is still the store's.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::memory::{apply, Map, MemoryStore};
use super::{Batch, KvStore, Op};
use crate::error::{Error, Result};

const MAGIC: &[u8; 4] = b"MNL1";
const HEADER: usize = 16;
const LOG: &str = "mnemo.log";
const DAMAGED: &str = "mnemo.damaged";
const DAMAGED_MAGIC: &[u8; 4] = b"MNDG";

/// A stretch of the log that could not be read (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Its offset in the log when it was found.
    pub at: u64,
    /// Its length in bytes.
    pub len: u64,
    /// What is wrong with it.
    pub reason: String,
    /// Whether it was already moved to `mnemo.damaged` (by a rewrite of the log).
    pub moved: bool,
}

/// Creates `path` for this store alone: readable and writable by the owner only (0600 on Unix),
/// and only if nothing exists there, so a file or symbolic link planted under that name is
/// never written through.
pub fn create_private(path: &Path) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path)
}

/// Opens `path` for appending, creating it owner-only when it is missing; a symbolic link is
/// refused (the store writes only files it owns).
fn open_append(path: &Path) -> Result<File> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.file_type().is_symlink() {
            return Err(io(
                path,
                std::io::Error::other(
                    "is a symbolic link; the store writes only files it created: replace it \
                     with the file it points to",
                ),
            ));
        }
    }
    let mut o = OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path).map_err(|e| io_op("open", path, e))
}

/// The durable, single-process file backend.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    file: File,
    map: MemoryStore,
    log_bytes: u64,
    /// Held while the store is open (`None` once [`FileStore::release`]d): its exclusive lock
    /// keeps other processes out.
    lock: Option<File>,
    /// The log's stamp when the lock was released (`None` when it could not be read).
    released: Option<Stamp>,
    /// Another process wrote while the lock was released: what is loaded is not the store's.
    stale: bool,
    /// Why writes are refused (a failed append that could not be undone).
    poisoned: Option<String>,
    /// Log size at which the next automatic compaction is tried (raised after a failure).
    retry_compaction_at: u64,
    /// Compact automatically when the log outgrows the live data (default true).
    auto_compact: bool,
    /// Bytes the live data takes as one compacted record (kept up to date on every write, so
    /// the compaction check does not walk the whole map each time).
    live: u64,
    /// Where a torn last record starts, while it is still in the file (cut at the next write),
    /// and whether it is only zeros (which a file system may add after a crash: nothing to keep).
    torn: Option<(u64, bool)>,
    /// Records that could not be read: in the log, or already moved to `mnemo.damaged`.
    damage: Vec<Damage>,
    #[cfg(test)]
    faults: Faults,
}

/// Faults the unit tests inject into the next append or compaction.
#[cfg(test)]
#[derive(Debug, Default)]
struct Faults {
    /// Write only this many bytes of the next record, then fail.
    short_write: Option<usize>,
    /// Fail the next compaction before it renames.
    compaction: bool,
}

/// What says a log is the one a released store left: its length, modification time and file
/// identity (a compaction by another process renames a new file over it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    file: u64,
}

fn stamp(path: &Path) -> Result<Stamp> {
    let m = std::fs::metadata(path).map_err(|e| io(path, e))?;
    #[cfg(unix)]
    let file = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let file = 0;
    Ok(Stamp { len: m.len(), modified: m.modified().ok(), file })
}

fn take_lock(dir: &Path) -> Result<File> {
    let lock_path = dir.join("mnemo.lock");
    let mut o = OpenOptions::new();
    o.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let lock = o.open(&lock_path).map_err(|e| io_op("open", &lock_path, e))?;
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(Error::Locked { path: dir.display().to_string() })
        }
        Err(std::fs::TryLockError::Error(e)) => Err(io(&lock_path, e)),
    }
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io { path: path.display().to_string(), detail: e.to_string() }
}

/// An I/O error naming the operation that failed.
fn io_op(op: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Io { path: path.display().to_string(), detail: format!("{op}: {e}") }
}

impl FileStore {
    /// Opens (creating if needed) the store in directory `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let lock = take_lock(&dir)?;
        let path = dir.join(LOG);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(&path, e)),
        };
        let Replayed { map, torn, mut damage } = replay(&bytes);
        let file = open_append(&path)?;
        damage.extend(read_damaged(&dir.join(DAMAGED))?);
        let live = map.iter().map(|(k, v)| entry_bytes(k.len(), v.len())).sum();
        Ok(Self {
            live,
            torn: torn.map(|(t, zeros)| (t as u64, zeros)),
            damage,
            dir,
            file,
            map: MemoryStore::from_map(map),
            log_bytes: bytes.len() as u64,
            lock: Some(lock),
            released: None,
            stale: false,
            poisoned: None,
            retry_compaction_at: 0,
            auto_compact: true,
            #[cfg(test)]
            faults: Faults::default(),
        })
    }

    /// Releases the lock, so other processes can open the store, and keeps what is loaded.
    /// Writes are refused until [`FileStore::reacquire`]. Releasing twice is harmless.
    pub fn release(&mut self) -> Result<()> {
        if self.lock.is_some() {
            // A stamp that cannot be read makes the next `reacquire` report the store stale.
            self.released = stamp(&self.log_path()).ok();
            self.lock = None;
        }
        Ok(())
    }

    /// Takes the lock back after [`FileStore::release`] ([`Error::Locked`] while another
    /// process holds it). `Ok(true)`: nobody wrote in between, so what is loaded (and an engine
    /// built on it) is current. `Ok(false)`: the log changed; this store now holds the lock but
    /// stale data (writes and compaction are refused), and the caller should drop it and
    /// [`FileStore::open`] the directory again.
    pub fn reacquire(&mut self) -> Result<bool> {
        if self.lock.is_some() {
            return Ok(!self.stale);
        }
        let lock = take_lock(&self.dir)?;
        let now = stamp(&self.log_path()).ok();
        self.lock = Some(lock);
        // A store found stale once stays stale, however often it is released again.
        let same = !self.stale && now.is_some() && self.released.take() == now;
        if !same {
            self.stale = true;
            self.poisoned = Some("the log changed while the store was released".into());
        }
        Ok(same)
    }

    /// Turns automatic compaction off or on. Off, the log only grows (until [`FileStore::compact`]
    /// or [`KvStore::vacuum`]): crash tests use it so every crash image is a prefix of one file.
    pub fn set_auto_compact(&mut self, on: bool) {
        self.auto_compact = on;
    }

    /// The log file's path.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join(LOG)
    }

    /// Rewrites the log as a single record of the live data.
    pub fn compact(&mut self) -> Result<()> {
        if self.lock.is_none() {
            return Err(Error::Locked { path: self.dir.display().to_string() });
        }
        if self.stale {
            // Rewriting the log from a stale map would erase what another process wrote.
            return Err(Error::Io {
                path: self.log_path().display().to_string(),
                detail: "the log changed while the store was released; reopen the store".into(),
            });
        }
        let mut all = Batch::new();
        for (k, v) in self.map.iter() {
            all.put(k.clone(), v.clone());
        }
        let record = encode(&all);
        let tmp = self.dir.join("mnemo.log.tmp");
        let path = self.dir.join(LOG);
        let mut f = match create_private(&tmp) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Left by a crash, or planted: unlink the name (never what a link points to).
                std::fs::remove_file(&tmp).map_err(|e| io_op("remove", &tmp, e))?;
                create_private(&tmp)
            }
            other => other,
        }
        .map_err(|e| io_op("create", &tmp, e))?;
        #[cfg(test)]
        if std::mem::take(&mut self.faults.compaction) {
            return Err(io(&tmp, std::io::Error::other("injected compaction failure")));
        }
        f.write_all(&record).map_err(|e| io_op("write", &tmp, e))?;
        f.sync_all().map_err(|e| io_op("fsync", &tmp, e))?;
        // What the log holds but cannot be read goes to mnemo.damaged before the log loses it.
        let mut keep: Vec<(u64, u64)> =
            self.damage.iter().filter(|d| !d.moved).map(|d| (d.at, d.len)).collect();
        keep.extend(self.torn.filter(|t| !t.1).map(|(t, _)| (t, self.log_bytes - t)));
        self.save_damaged(&keep)?;
        std::fs::rename(&tmp, &path).map_err(|e| io_op("rename", &path, e))?;
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all(); // directory entry durability, where the OS allows it
        }
        self.file = match open_append(&path) {
            Ok(f) => f,
            Err(e) => {
                // The handle held points at the replaced file: writing there would be lost.
                self.stale = true;
                return Err(e);
            }
        };
        self.log_bytes = record.len() as u64;
        self.torn = None;
        for d in &mut self.damage {
            d.moved = true;
        }
        Ok(())
    }

    /// Records that could not be read (module docs): in the log, or in `mnemo.damaged`.
    pub fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// Appends the log's bytes at `regions` (offset, length) to `mnemo.damaged` and syncs it.
    fn save_damaged(&self, regions: &[(u64, u64)]) -> Result<()> {
        if regions.is_empty() {
            return Ok(());
        }
        use std::io::{Read, Seek, SeekFrom};
        let log = self.log_path();
        let side = self.dir.join(DAMAGED);
        let mut from = File::open(&log).map_err(|e| io_op("open", &log, e))?;
        let mut out = open_append(&side)?;
        for &(at, len) in regions {
            let mut bytes = vec![0; usize::try_from(len).unwrap_or(0)];
            from.seek(SeekFrom::Start(at)).map_err(|e| io_op("seek", &log, e))?;
            from.read_exact(&mut bytes).map_err(|e| io_op("read", &log, e))?;
            let mut entry = Vec::with_capacity(bytes.len() + 20);
            entry.extend_from_slice(DAMAGED_MAGIC);
            entry.extend_from_slice(&at.to_le_bytes());
            entry.extend_from_slice(&len.to_le_bytes());
            entry.extend_from_slice(&bytes);
            out.write_all(&entry).map_err(|e| io_op("write", &side, e))?;
        }
        out.sync_all().map_err(|e| io_op("fsync", &side, e))
    }

    /// Before the first append after opening: a torn last record is copied to
    /// `mnemo.damaged` and cut off, so the new record does not land behind it.
    fn cut_torn_tail(&mut self) -> Result<()> {
        let Some((t, zeros)) = self.torn else { return Ok(()) };
        if !zeros {
            self.save_damaged(&[(t, self.log_bytes - t)])?;
        }
        let path = self.log_path();
        self.file.set_len(t).map_err(|e| io_op("truncate", &path, e))?;
        self.file.sync_all().map_err(|e| io_op("fsync", &path, e))?;
        self.log_bytes = t;
        self.torn = None;
        if zeros {
            return Ok(());
        }
        self.damage.push(Damage {
            at: t,
            len: self.log_bytes - t,
            reason: format!(
                "a last record shorter than its header says (a write that never completed, or \
                 a log cut from outside), moved to {DAMAGED}"
            ),
            moved: true,
        });
        Ok(())
    }

    fn live_bytes(&self) -> u64 {
        self.live
    }

    /// Keeps `live` in step with `batch`, before the map applies it.
    fn account(&mut self, batch: &Batch) {
        // Ops apply in order and may touch one key twice: track sizes as they will be.
        let mut seen: std::collections::HashMap<&[u8], Option<usize>> = Default::default();
        for op in batch.ops() {
            let key = match op {
                Op::Put(k, _) | Op::Delete(k) => k.as_slice(),
            };
            let before = match seen.get(key) {
                Some(s) => *s,
                None => self.map.value_len(key),
            };
            if let Some(len) = before {
                self.live -= entry_bytes(key.len(), len);
            }
            let after = match op {
                Op::Put(_, v) => Some(v.len()),
                Op::Delete(_) => None,
            };
            if let Some(len) = after {
                self.live += entry_bytes(key.len(), len);
            }
            seen.insert(key, after);
        }
    }

    /// Appends `record` and syncs it.
    fn append(&mut self, record: &[u8]) -> std::io::Result<()> {
        #[cfg(test)]
        if let Some(n) = self.faults.short_write.take() {
            self.file.write_all(&record[..n.min(record.len())])?;
            return Err(std::io::Error::other("injected short write"));
        }
        self.file.write_all(record)?;
        self.file.sync_data()
    }
}

impl KvStore for FileStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.map.get(key)
    }

    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.map.scan(prefix, after, limit)
    }

    fn write(&mut self, batch: &Batch) -> Result<()> {
        if self.lock.is_none() {
            return Err(Error::Locked { path: self.dir.display().to_string() });
        }
        if let Some(why) = &self.poisoned {
            return Err(Error::Io {
                path: self.dir.join(LOG).display().to_string(),
                detail: format!("{why}; reopen the store (the next write moves the partial record to {DAMAGED})"),
            });
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.cut_torn_tail()?;
        let record = encode(batch);
        let path = self.dir.join(LOG);
        if let Err(e) = self.append(&record) {
            // Cut off whatever part of the record reached the file, so that the next append
            // does not land behind a partial record (which would read as mid-log corruption).
            let undo = self.file.set_len(self.log_bytes).and_then(|()| self.file.sync_all());
            if let Err(u) = undo {
                self.poisoned = Some(format!("a failed append ({e}) could not be cut off ({u})"));
            }
            return Err(io(&path, e));
        }
        self.account(batch);
        self.map.write(batch)?;
        self.log_bytes += record.len() as u64;
        // Twice the live data, and at least 1 MiB over it (so a small store is not rewritten on
        // every write): opening never reads more than twice the live data past 1 MiB of it.
        let due = (2 * self.live_bytes()).max(self.live_bytes() + (1 << 20));
        if self.auto_compact
            && self.log_bytes > due.max(self.retry_compaction_at)
            && self.compact().is_err()
        {
            // The batch is durable: report success, and try again after another MiB.
            self.retry_compaction_at = self.log_bytes + (1 << 20);
        }
        Ok(())
    }

    fn vacuum(&mut self) -> Result<()> {
        self.compact()
    }

    fn damage(&self) -> Vec<String> {
        self.damage
            .iter()
            .map(|d| format!("{LOG} bytes {}..{}: {}", d.at, d.at + d.len, d.reason))
            .collect()
    }
}

/// What one entry takes in a compacted record: tag, two lengths, key and value.
fn entry_bytes(key: usize, value: usize) -> u64 {
    (key + value + 9) as u64
}

fn encode(batch: &Batch) -> Vec<u8> {
    let mut payload = Vec::new();
    payload.extend_from_slice(&(batch.ops().len() as u32).to_le_bytes());
    for op in batch.ops() {
        let (tag, key, value) = match op {
            Op::Put(k, v) => (1u8, k, Some(v)),
            Op::Delete(k) => (2u8, k, None),
        };
        payload.push(tag);
        payload.extend_from_slice(&(key.len() as u32).to_le_bytes());
        payload.extend_from_slice(key);
        if let Some(v) = value {
            payload.extend_from_slice(&(v.len() as u32).to_le_bytes());
            payload.extend_from_slice(v);
        }
    }
    let mut record = Vec::with_capacity(HEADER + payload.len());
    record.extend_from_slice(MAGIC);
    let len = (payload.len() as u32).to_le_bytes();
    record.extend_from_slice(&len);
    record.extend_from_slice(&crc32fast::hash(&len).to_le_bytes());
    record.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    record.extend_from_slice(&payload);
    record
}

/// What replaying a log found (module docs).
pub(crate) struct Replayed {
    pub map: Map,
    /// Where a torn last record starts, if the log ends with one, and whether it is only zeros.
    pub torn: Option<(usize, bool)>,
    /// The records that could not be read.
    pub damage: Vec<Damage>,
}

/// Whether a whole, valid record starts at `bytes[0]`; its length if so.
fn whole_record(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < HEADER || &bytes[..4] != MAGIC {
        return None;
    }
    let word = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    if crc32fast::hash(&bytes[4..8]) != word(8) {
        return None;
    }
    let end = HEADER.checked_add(word(4) as usize)?;
    (bytes.len() >= end && crc32fast::hash(&bytes[HEADER..end]) == word(12)).then_some(end)
}

/// Replays the log into a map, skipping and reporting what cannot be read (module docs).
pub(crate) fn replay(bytes: &[u8]) -> Replayed {
    let mut out = Replayed { map: Map::new(), torn: None, damage: Vec::new() };
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let zeros = rest.iter().all(|&b| b == 0);
        if rest.len() < HEADER || zeros {
            out.torn = Some((at, zeros)); // a torn header, or zeros the file system added
            break;
        }
        let word = |i: usize| u32::from_le_bytes(rest[i..i + 4].try_into().expect("4 bytes"));
        let header_ok = &rest[..4] == MAGIC && crc32fast::hash(&rest[4..8]) == word(8);
        if !header_ok {
            // Resume at the next whole record; everything before it is damage.
            let next = (1..rest.len()).find(|&i| whole_record(&rest[i..]).is_some());
            let len = next.unwrap_or(rest.len());
            out.damage.push(Damage {
                at: at as u64,
                len: len as u64,
                reason: "a damaged record header".into(),
                moved: false,
            });
            at += len;
            continue;
        }
        let end = HEADER.saturating_add(word(4) as usize);
        if rest.len() < end {
            out.torn = Some((at, false)); // shorter than its header says: never finished
            break;
        }
        let reason = if crc32fast::hash(&rest[HEADER..end]) != word(12) {
            Some("a record failing its checksum".to_string())
        } else {
            match decode(&rest[HEADER..end]) {
                Ok(batch) => {
                    apply(&mut out.map, &batch);
                    None
                }
                Err(d) => Some(format!("a record that does not decode: {d}")),
            }
        };
        if let Some(reason) = reason {
            out.damage.push(Damage { at: at as u64, len: end as u64, reason, moved: false });
        }
        at += end;
    }
    out
}

/// The stretches kept in `mnemo.damaged` (module docs); a cut-short entry ends the list.
fn read_damaged(path: &Path) -> Result<Vec<Damage>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_op("read", path, e)),
    };
    let mut out = Vec::new();
    let mut p = &bytes[..];
    while p.len() >= 20 && &p[..4] == DAMAGED_MAGIC {
        let at = u64::from_le_bytes(p[4..12].try_into().expect("8 bytes"));
        let len = u64::from_le_bytes(p[12..20].try_into().expect("8 bytes"));
        let Some(rest) = usize::try_from(len).ok().and_then(|n| p.get(20 + n..)) else { break };
        out.push(Damage {
            at,
            len,
            reason: format!("unreadable bytes of the log, moved to {DAMAGED}"),
            moved: true,
        });
        p = rest;
    }
    Ok(out)
}

fn decode(mut p: &[u8]) -> std::result::Result<Batch, String> {
    fn take<'a>(p: &mut &'a [u8], n: usize) -> std::result::Result<&'a [u8], String> {
        if p.len() < n {
            return Err(format!("needs {n} more bytes, has {}", p.len()));
        }
        let (head, tail) = p.split_at(n);
        *p = tail;
        Ok(head)
    }
    fn u32_(p: &mut &[u8]) -> std::result::Result<usize, String> {
        Ok(u32::from_le_bytes(take(p, 4)?.try_into().expect("4 bytes")) as usize)
    }
    let count = u32_(&mut p)?;
    let mut batch = Batch::new();
    for _ in 0..count {
        let tag = take(&mut p, 1)?[0];
        let klen = u32_(&mut p)?;
        let key = take(&mut p, klen)?.to_vec();
        match tag {
            1 => {
                let vlen = u32_(&mut p)?;
                batch.put(key, take(&mut p, vlen)?.to_vec());
            }
            2 => {
                batch.delete(key);
            }
            t => return Err(format!("unknown op tag {t}")),
        }
    }
    if !p.is_empty() {
        return Err(format!("{} trailing bytes", p.len()));
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mnemo-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn put(k: &str, v: &str) -> Batch {
        let mut b = Batch::new();
        b.put(k.as_bytes().to_vec(), v.as_bytes().to_vec());
        b
    }

    #[test]
    fn a_released_store_lets_others_in_and_knows_when_they_wrote() {
        let d = dir("release");
        let mut s = FileStore::open(&d).unwrap();
        s.write(&put("a", "1")).unwrap();
        s.release().unwrap();
        assert_eq!(s.write(&put("b", "2")).unwrap_err().code(), "LOCKED", "released: no writes");
        assert_eq!(s.get(b"a").unwrap().as_deref(), Some(&b"1"[..]), "reads what it loaded");
        // Nobody wrote: what is loaded is current.
        assert!(s.reacquire().unwrap());
        s.write(&put("b", "2")).unwrap();
        s.release().unwrap();
        // Another process opens it meanwhile, so taking it back waits for that one.
        let mut other = FileStore::open(&d).expect("a released store can be opened");
        assert_eq!(s.reacquire().unwrap_err().code(), "LOCKED");
        other.write(&put("c", "3")).unwrap();
        drop(other);
        assert!(!s.reacquire().unwrap(), "the other process wrote");
        assert_eq!(s.write(&put("d", "4")).unwrap_err().code(), "IO", "stale: reopen first");
        s.release().unwrap();
        assert!(!s.reacquire().unwrap(), "still stale after another release");
        assert!(!s.reacquire().unwrap(), "still stale while held");
        assert_eq!(s.compact().unwrap_err().code(), "IO", "a stale map never rewrites the log");
        drop(s);
        // A compaction by another process renames a new log over the old one.
        let mut s = FileStore::open(&d).unwrap();
        assert_eq!(s.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
        s.release().unwrap();
        FileStore::open(&d).unwrap().compact().unwrap();
        assert!(!s.reacquire().unwrap(), "a compacted log is another log");
    }

    #[test]
    fn a_failed_append_is_cut_off_and_later_writes_stay_readable() {
        let d = dir("short");
        let mut s = FileStore::open(&d).unwrap();
        s.write(&put("a", "1")).unwrap();
        s.faults.short_write = Some(11);
        assert_eq!(s.write(&put("b", "2")).unwrap_err().code(), "IO");
        assert_eq!(s.get(b"b").unwrap(), None, "a failed write changes nothing");
        s.write(&put("c", "3")).unwrap();
        drop(s);
        let s = FileStore::open(&d).expect("no partial record sits mid-log");
        assert_eq!(s.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(s.get(b"b").unwrap(), None);
        assert_eq!(s.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
    }

    #[test]
    fn a_failed_compaction_does_not_fail_the_write_that_happened() {
        let d = dir("compaction");
        let mut s = FileStore::open(&d).unwrap();
        let big = "x".repeat(600 * 1024);
        s.write(&put("k", &big)).unwrap();
        s.faults.compaction = true;
        // Overwriting the value leaves 1.2 MB of log for 0.6 MB live: compaction is due.
        s.write(&put("k", &big.replace('x', "y"))).expect("the append was durable");
        assert!(s.log_bytes > 1_200_000, "the compaction failed, the log kept its records");
        s.write(&put("k", "small")).unwrap();
        drop(s);
        let s = FileStore::open(&d).unwrap();
        assert_eq!(s.get(b"k").unwrap().as_deref(), Some(&b"small"[..]));
    }

    #[test]
    fn live_bytes_follow_every_write_as_a_recount_would() {
        let d = dir("live");
        let mut s = FileStore::open(&d).unwrap();
        let recount = |s: &FileStore| -> u64 {
            s.map.iter().map(|(k, v)| entry_bytes(k.len(), v.len())).sum()
        };
        for i in 0..200u32 {
            let mut b = Batch::new();
            b.put(format!("k{}", i % 17).into_bytes(), vec![1; (i % 13) as usize]);
            b.put(format!("k{}", i % 5).into_bytes(), vec![2; 3]);
            if i % 3 == 0 {
                b.delete(format!("k{}", i % 7).into_bytes());
                b.put(format!("k{}", i % 7).into_bytes(), vec![3; 1]);
                b.delete(format!("k{}", i % 7).into_bytes());
            }
            s.write(&b).unwrap();
            assert_eq!(s.live_bytes(), recount(&s), "after batch {i}");
        }
        drop(s);
        let s = FileStore::open(&d).unwrap();
        assert_eq!(s.live_bytes(), recount(&s));
    }

    #[test]
    fn one_process_at_a_time() {
        let d = dir("lock");
        let s = FileStore::open(&d).unwrap();
        assert_eq!(FileStore::open(&d).unwrap_err().code(), "LOCKED");
        drop(s);
        FileStore::open(&d).expect("the lock goes with the store");
    }

    #[test]
    fn vacuum_leaves_no_byte_of_deleted_values_in_the_file() {
        let d = dir("vacuum");
        let mut s = FileStore::open(&d).unwrap();
        s.write(&put("keep", "public")).unwrap();
        s.write(&put("gone", "secret-marker-7731")).unwrap();
        let mut b = Batch::new();
        b.delete(b"gone".to_vec());
        s.write(&b).unwrap();
        let raw = std::fs::read(d.join(LOG)).unwrap();
        assert!(raw.windows(18).any(|w| w == b"secret-marker-7731"), "a log keeps deleted bytes");
        s.vacuum().unwrap();
        let raw = std::fs::read(d.join(LOG)).unwrap();
        assert!(!raw.windows(18).any(|w| w == b"secret-marker-7731"));
        assert!(!raw.windows(4).any(|w| w == b"gone"));
        drop(s);
        assert_eq!(
            FileStore::open(&d).unwrap().get(b"keep").unwrap().as_deref(),
            Some(&b"public"[..])
        );
    }
}
