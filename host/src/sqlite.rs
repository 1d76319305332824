//! SQLite-backed storage: one table of (key BLOB PRIMARY KEY, value BLOB), a batch is one
//! transaction (committed before `write` returns; WAL journal, synchronous=FULL), scans are
//! index range reads in key (byte) order.
//!
//! Erasure: `secure_delete` is on, so SQLite overwrites deleted content in the database pages
//! with zeros; [`KvStore::vacuum`] then checkpoints the WAL into the database and truncates it
//! (`wal_checkpoint(TRUNCATE)`), since the WAL still holds the old page images.

use mnemo::store::{Batch, KvStore, Op};
use mnemo::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};

/// A [`KvStore`] in one SQLite file.
pub struct SqliteStore {
    conn: Connection,
    path: String,
}

fn err(path: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| Error::Io { path: path.to_string(), detail: e.to_string() }
}

impl SqliteStore {
    /// Opens (or creates) the database at `path`.
    pub fn open(path: &str) -> Result<Self> {
        let conn = Connection::open(path).map_err(err(path))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON;
             CREATE TABLE IF NOT EXISTS kv (key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;",
        )
        .map_err(err(path))?;
        Ok(Self { conn, path: path.to_string() })
    }
}

impl KvStore for SqliteStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.conn
            .query_row("SELECT value FROM kv WHERE key = ?1", params![key], |r| r.get(0))
            .optional()
            .map_err(err(&self.path))
    }

    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        // Keys starting with `prefix` are those >= prefix and < the next prefix (BLOBs compare
        // bytewise, as memcmp).
        let start = match after {
            Some(a) if a >= prefix => a.to_vec(),
            _ => prefix.to_vec(),
        };
        let exclusive = after.is_some_and(|a| a >= prefix);
        let mut end = prefix.to_vec();
        while end.last() == Some(&0xff) {
            end.pop();
        }
        let bounded = if let Some(last) = end.last_mut() {
            *last += 1;
            true
        } else {
            false
        };
        let op = if exclusive { ">" } else { ">=" };
        let sql = if bounded {
            format!(
                "SELECT key, value FROM kv WHERE key {op} ?1 AND key < ?2 ORDER BY key LIMIT ?3"
            )
        } else {
            format!("SELECT key, value FROM kv WHERE key {op} ?1 AND ?2 IS NOT NULL ORDER BY key LIMIT ?3")
        };
        let mut stmt = self.conn.prepare_cached(&sql).map_err(err(&self.path))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(params![start, end, limit], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(err(&self.path))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(err(&self.path))
    }

    fn write(&mut self, batch: &Batch) -> Result<()> {
        let tx = self.conn.transaction().map_err(err(&self.path))?;
        for op in batch.ops() {
            match op {
                Op::Put(k, v) => tx.execute(
                    "INSERT INTO kv (key, value) VALUES (?1, ?2)
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    params![k, v],
                ),
                Op::Delete(k) => tx.execute("DELETE FROM kv WHERE key = ?1", params![k]),
            }
            .map_err(err(&self.path))?;
        }
        tx.commit().map_err(err(&self.path))
    }

    fn vacuum(&mut self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0))
            .map_err(err(&self.path))
            .and_then(|busy| match busy {
                0 => Ok(()),
                _ => Err(Error::Io {
                    path: self.path.clone(),
                    detail: "the WAL checkpoint was blocked by another connection: close it and \
                             erase again"
                        .into(),
                }),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo::store::contract;

    #[test]
    fn passes_the_storage_contract_and_survives_reopening() {
        let dir = std::env::temp_dir().join(format!("mnemo-sqlite-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kv.sqlite").to_string_lossy().to_string();
        contract::check(&mut SqliteStore::open(&path).unwrap());
        let fresh = dir.join("reopen.sqlite").to_string_lossy().to_string();
        contract::check_reopen(SqliteStore::open(&fresh).unwrap(), |s| {
            drop(s);
            SqliteStore::open(&fresh).unwrap()
        });
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn vacuum_leaves_no_byte_of_deleted_values_in_the_database_or_its_wal() {
        use mnemo::store::Batch;
        let dir = std::env::temp_dir().join(format!("mnemo-sqlite-vacuum-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kv.sqlite").to_string_lossy().to_string();
        let mut s = SqliteStore::open(&path).unwrap();
        let mut b = Batch::new();
        b.put(b"keep".to_vec(), b"public".to_vec());
        b.put(b"gone".to_vec(), b"secret-marker-5519".repeat(50));
        s.write(&b).unwrap();
        let mut d = Batch::new();
        d.delete(b"gone".to_vec());
        s.write(&d).unwrap();
        s.vacuum().unwrap();
        for file in std::fs::read_dir(&dir).unwrap() {
            let bytes = std::fs::read(file.unwrap().path()).unwrap();
            assert!(!bytes.windows(18).any(|w| w == b"secret-marker-5519"));
        }
        assert_eq!(s.get(b"keep").unwrap().as_deref(), Some(&b"public"[..]));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
