//! The key schema. Every key lives under its user's namespace, so deleting a user is one prefix.
//!
//! ```text
//! u/<namespace>/<table>/<id>
//! ```
//!
//! One key lives outside every namespace: `g/vacuum-pending`, written by an erasure and removed
//! once the store was vacuumed (`engine::erase`).
//!
//! `namespace` is 1–64 bytes of `[A-Za-z0-9._@-]` (no `/`, so one namespace's prefix never
//! covers another's); `table` is one [`Table`] code; `id` is the record's own bytes (big-endian
//! integers sort numerically).

use super::{Batch, KvStore};
use crate::error::{Error, Result};

/// What a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// Episodes (append-only log).
    Episode,
    /// The current version of each fact.
    Fact,
    /// Superseded fact versions (history, rollback).
    FactHistory,
    /// Procedural rules.
    Rule,
    /// Per-namespace metadata (model id, counters).
    Meta,
    /// Episode vectors (kept apart so access updates do not rewrite them).
    Vector,
    /// The current entity triple per (subject, predicate).
    Triple,
    /// Invalidated triples, with their validity end.
    TripleHistory,
    /// Snapshots of derived indexes (`engine::persist::snapshot`).
    Snapshot,
    /// Behaviour signals, keyed by time (`record::signal`).
    Signal,
    /// Observations (`record::observation`).
    Observation,
    /// Observation embeddings, kept apart so rejecting one deletes it.
    ObservationVector,
    /// What each recall returned (`record::outcome`).
    Retrieval,
    /// How the task a recall served ended.
    Outcome,
    /// The learning loop's resumable state (the nightly job's cursor).
    Learning,
    /// Erasure requests waiting for the nightly job (`engine::erase`).
    ErasureQueue,
    /// The identity of each imported line and the record it became (`engine::import`).
    Imported,
}

impl Table {
    /// Every table, in key order of their codes.
    pub const ALL: [Table; 17] = [
        Table::Episode,
        Table::Fact,
        Table::Signal,
        Table::FactHistory,
        Table::Imported,
        Table::Outcome,
        Table::Retrieval,
        Table::Meta,
        Table::Learning,
        Table::Observation,
        Table::ErasureQueue,
        Table::Rule,
        Table::Snapshot,
        Table::Triple,
        Table::Vector,
        Table::ObservationVector,
        Table::TripleHistory,
    ];

    /// The table a key of namespace `ns` belongs to, and the record id after its prefix.
    pub fn of_key<'k>(ns: &Namespace, key: &'k [u8]) -> Option<(Table, &'k [u8])> {
        let rest = key.strip_prefix(ns.prefix().as_slice())?;
        let slash = rest.iter().position(|&b| b == b'/')?;
        let table = Table::ALL.into_iter().find(|t| t.code().as_bytes() == &rest[..slash])?;
        Some((table, &rest[slash + 1..]))
    }

    /// A name for people (receipts, exports).
    pub fn name(self) -> &'static str {
        match self {
            Table::Episode => "episodes",
            Table::Fact => "facts",
            Table::FactHistory => "fact history",
            Table::Rule => "rules",
            Table::Meta => "namespace meta",
            Table::Vector => "episode vectors",
            Table::Triple => "triples",
            Table::TripleHistory => "triple history",
            Table::Snapshot => "snapshot",
            Table::Signal => "signals",
            Table::Observation => "observations",
            Table::ObservationVector => "observation vectors",
            Table::Retrieval => "retrievals",
            Table::Outcome => "outcomes",
            Table::Learning => "learning state",
            Table::ErasureQueue => "erasure requests",
            Table::Imported => "imported lines",
        }
    }

    fn code(self) -> &'static str {
        match self {
            Table::Episode => "e",
            Table::Fact => "f",
            Table::FactHistory => "h",
            Table::Rule => "r",
            Table::Meta => "m",
            Table::Vector => "v",
            Table::Triple => "t",
            Table::TripleHistory => "x",
            Table::Snapshot => "s",
            Table::Signal => "g",
            Table::Observation => "o",
            Table::ObservationVector => "w",
            Table::Retrieval => "l",
            Table::Outcome => "k",
            Table::Learning => "n",
            Table::ErasureQueue => "q",
            Table::Imported => "i",
        }
    }
}

/// A checked namespace (one per user).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Namespace(String);

impl Namespace {
    /// Checks `name`: 1–64 bytes of ASCII letters, digits, `.`, `_`, `@` or `-`.
    pub fn new(name: &str) -> Result<Self> {
        let ok = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b));
        if ok {
            Ok(Self(name.to_string()))
        } else {
            Err(Error::InvalidInput(format!(
                "namespace {name:?} must be 1-64 characters of letters, digits, '.', '_', '@' or \
                 '-' (hash or encode user ids that contain other characters)"
            )))
        }
    }

    /// The namespace as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `u/<namespace>/`: every key of this namespace starts with it.
    pub fn prefix(&self) -> Vec<u8> {
        format!("u/{}/", self.0).into_bytes()
    }

    /// `u/<namespace>/<table>/`.
    pub fn table_prefix(&self, table: Table) -> Vec<u8> {
        format!("u/{}/{}/", self.0, table.code()).into_bytes()
    }

    /// The key of record `id` in `table`.
    pub fn key(&self, table: Table, id: &[u8]) -> Vec<u8> {
        let mut k = self.table_prefix(table);
        k.extend_from_slice(id);
        k
    }
}

/// Deletes every key of `ns` in one atomic batch; returns how many keys were removed.
pub fn purge_namespace(store: &mut impl KvStore, ns: &Namespace) -> Result<usize> {
    let prefix = ns.prefix();
    let mut batch = Batch::new();
    let mut after: Option<Vec<u8>> = None;
    let mut count = 0;
    loop {
        let page = store.scan(&prefix, after.as_deref(), 1024)?;
        let Some(last) = page.last() else { break };
        after = Some(last.0.clone());
        for (k, _) in page {
            batch.delete(k);
            count += 1;
        }
    }
    store.write(&batch)?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    #[test]
    fn namespaces_are_checked() {
        for good in ["alice", "user-42", "a.b_c@d", &"x".repeat(64)] {
            assert!(Namespace::new(good).is_ok(), "{good}");
        }
        for bad in ["", "a/b", "ali ce", "è", &"x".repeat(65)] {
            assert_eq!(Namespace::new(bad).unwrap_err().code(), "INVALID_INPUT", "{bad:?}");
        }
    }

    #[test]
    fn purge_removes_one_namespace_and_nothing_else() {
        let mut s = MemoryStore::new();
        let (a, ab) = (Namespace::new("a").unwrap(), Namespace::new("ab").unwrap());
        let mut b = Batch::new();
        for i in 0..3000u32 {
            b.put(a.key(Table::Episode, &i.to_be_bytes()), vec![1]);
        }
        b.put(a.key(Table::Fact, b"tone"), vec![2]);
        b.put(ab.key(Table::Episode, &[0]), vec![3]);
        s.write(&b).unwrap();
        assert_eq!(purge_namespace(&mut s, &a).unwrap(), 3001);
        assert!(s.scan(&a.prefix(), None, 10).unwrap().is_empty());
        assert_eq!(s.len(), 1, "namespace `ab` shares a string prefix with `a` but survives");
        assert_eq!(s.get(&ab.key(Table::Episode, &[0])).unwrap(), Some(vec![3]));
    }
}
