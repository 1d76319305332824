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
//! past twice
//! the live data, it is rewritten as one record into `mnemo.log.tmp` and renamed over the log.

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
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io { path: path.display().to_string(), detail: e.to_string() }
}

impl FileStore {
    /// Opens (creating if needed) the store in directory `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
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
        Ok(Self { dir, file, map: MemoryStore::from_map(map), log_bytes: valid as u64 })
    }

    /// Rewrites the log as a single record of the live data.
    pub fn compact(&mut self) -> Result<()> {
        let mut all = Batch::new();
        for (k, v) in self.map.iter() {
            all.put(k.clone(), v.clone());
        }
        let record = encode(&all);
        let tmp = self.dir.join("mnemo.log.tmp");
        let path = self.dir.join(LOG);
        let mut f = File::create(&tmp).map_err(|e| io(&tmp, e))?;
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
        self.map.iter().map(|(k, v)| (k.len() + v.len() + 9) as u64).sum()
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
        if batch.is_empty() {
            return Ok(());
        }
        let record = encode(batch);
        let path = self.dir.join(LOG);
        self.file.write_all(&record).map_err(|e| io(&path, e))?;
        self.file.sync_data().map_err(|e| io(&path, e))?;
        self.map.write(batch)?;
        self.log_bytes += record.len() as u64;
        if self.log_bytes > 2 * self.live_bytes() + (1 << 20) {
            self.compact()?;
        }
        Ok(())
    }
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
fn replay(bytes: &[u8], path: &Path) -> Result<(Map, usize)> {
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
