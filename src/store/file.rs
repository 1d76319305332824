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
//! an acknowledged batch is on disk. On open the log is replayed into memory; a record cut short
//! or failing its checksum *at the end* of the file is a write that never completed (a crash) and
//! is dropped, which keeps batches atomic. A bad record followed by more data, or a complete
//! header whose length fails `len_crc` (so a damaged length cannot pass for a torn tail), is
//! corruption: opening fails with [`Error::Corrupt`] without touching the file. When the log grows
//! past twice the live data (and at least 1 MiB past it), it is rewritten as one record into `mnemo.log.tmp` and
//! renamed over the log; [`KvStore::vacuum`] does the same on demand, so deleted values leave
//! the file (erasure).
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
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| io(&lock_path, e))?;
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
        let (map, valid) = replay(&bytes, &path)?;
        let file =
            OpenOptions::new().create(true).append(true).open(&path).map_err(|e| io(&path, e))?;
        if valid < bytes.len() {
            // a torn tail from a crash: never acknowledged, so cut it off
            file.set_len(valid as u64).map_err(|e| io(&path, e))?;
            file.sync_all().map_err(|e| io(&path, e))?;
        }
        let live = map.iter().map(|(k, v)| entry_bytes(k.len(), v.len())).sum();
        Ok(Self {
            live,
            dir,
            file,
            map: MemoryStore::from_map(map),
            log_bytes: valid as u64,
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
        let mut f = File::create(&tmp).map_err(|e| io(&tmp, e))?;
        #[cfg(test)]
        if std::mem::take(&mut self.faults.compaction) {
            return Err(io(&tmp, std::io::Error::other("injected compaction failure")));
        }
        f.write_all(&record).map_err(|e| io(&tmp, e))?;
        f.sync_all().map_err(|e| io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))?;
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all(); // directory entry durability, where the OS allows it
        }
        self.file = OpenOptions::new().append(true).open(&path).map_err(|e| io(&path, e))?;
        self.log_bytes = record.len() as u64;
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
                detail: format!("{why}; reopen the store (opening drops the partial record)"),
            });
        }
        if batch.is_empty() {
            return Ok(());
        }
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

/// Replays the log; returns the map and the length of the valid prefix of `bytes`.
pub(crate) fn replay(bytes: &[u8], path: &Path) -> Result<(Map, usize)> {
    let mut map = Map::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let corrupt = |detail: String| Error::Corrupt { what: path.display().to_string(), detail };
        if rest.len() < HEADER || rest.iter().all(|&b| b == 0) {
            break; // a torn header, or a tail the file system extended with zeros, at the end
        }
        let word = |i: usize| u32::from_le_bytes(rest[i..i + 4].try_into().expect("4 bytes"));
        if &rest[..4] != MAGIC || crc32fast::hash(&rest[4..8]) != word(8) {
            return Err(corrupt(format!("bad record header at byte {at}")));
        }
        let len = word(4) as usize;
        let end = HEADER.saturating_add(len);
        let complete = rest.len() >= end;
        let valid = complete && crc32fast::hash(&rest[HEADER..end]) == word(12);
        if !valid {
            if !complete || rest.len() == end {
                break; // the last record, cut short or torn: a write that never finished
            }
            return Err(corrupt(format!(
                "bad record at byte {at} with {} bytes after it",
                rest.len()
            )));
        }
        let batch =
            decode(&rest[HEADER..end]).map_err(|d| corrupt(format!("record at byte {at}: {d}")))?;
        apply(&mut map, &batch);
        at += end;
    }
    Ok((map, at))
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
