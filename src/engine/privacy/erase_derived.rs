//! What an erasure rebuilds after its scan: the records that were derived from erased ones
//! return to what they were before (see `engine::erase`'s module docs).
//!
//! - Sources of a dissolved compaction summary: `group` cleared; a superseded source not
//!   represented by a rule is raw again (tier 0) or an active weekly summary (tier 1).
//! - Episodes a deleted lesson rule stood for: `represented_by` cleared; raw again.
//! - Rules a deleted rule had absorbed: active again.
//!
//! Each episode is rewritten once, with every change that applies to it.

use std::collections::BTreeMap;

use crate::engine::privacy::erase::Plan;
use crate::engine::Engine;
use crate::error::Result;
use crate::record::{Episode, RuleStatus, Status};
use crate::store::{KvStore, Namespace, Table};

/// Episode `id` as the rewrites hold it, read from the store the first time (`None` when it
/// is not stored or does not decode: nothing to rebuild).
fn stored<'r>(
    store: &impl KvStore,
    ns: &Namespace,
    rewrites: &'r mut BTreeMap<u64, Episode>,
    id: u64,
) -> Result<Option<&'r mut Episode>> {
    match rewrites.entry(id) {
        std::collections::btree_map::Entry::Occupied(o) => Ok(Some(o.into_mut())),
        std::collections::btree_map::Entry::Vacant(v) => {
            let Some(bytes) = store.get(&ns.key(Table::Episode, &id.to_be_bytes()))? else {
                return Ok(None);
            };
            Ok(Episode::decode(&bytes).ok().map(|e| v.insert(e)))
        }
    }
}

impl<S: KvStore> Engine<S> {
    pub(super) fn restore_derived(&self, ns: &Namespace, p: &mut Plan) -> Result<()> {
        let mut rewrites: BTreeMap<u64, Episode> = BTreeMap::new();
        let gone =
            |p: &Plan, id: u64| p.episodes.contains(&id) || p.dissolved.iter().any(|d| d.0 == id);
        let mut changed = std::collections::BTreeSet::new();
        for (rule, episodes) in &p.unrepresent {
            for &id in episodes {
                if gone(p, id) {
                    continue;
                }
                let Some(e) = stored(&self.store, ns, &mut rewrites, id)? else { continue };
                if e.represented_by == *rule {
                    e.represented_by = 0;
                    if e.status == Status::Superseded {
                        e.status = Status::Raw;
                    }
                    changed.insert(id);
                }
            }
        }
        for (summary, evidence) in &p.dissolved {
            for &id in evidence {
                if gone(p, id) {
                    continue;
                }
                let Some(e) = stored(&self.store, ns, &mut rewrites, id)? else { continue };
                if e.group != *summary {
                    continue;
                }
                e.group = 0;
                if e.status == Status::Superseded && e.represented_by == 0 {
                    e.status = if e.tier == 0 { Status::Raw } else { Status::Active };
                }
                changed.insert(id);
            }
        }
        for id in changed {
            let e = &rewrites[&id];
            p.batch.put(ns.key(Table::Episode, &id.to_be_bytes()), e.encode());
            p.tally.add(Table::Episode, 0, 1);
        }
        if !p.rules_gone.is_empty() {
            for mut r in self.rules(ns.as_str(), &[RuleStatus::Superseded])? {
                let by_gone = r.superseded_by.is_some_and(|b| p.rules_gone.contains(&b));
                if by_gone && !p.rules_gone.contains(&r.id) {
                    r.status = RuleStatus::Active;
                    r.superseded_by = None;
                    p.batch.put(ns.key(Table::Rule, &r.id.to_be_bytes()), r.encode());
                    p.tally.add(Table::Rule, 0, 1);
                }
            }
        }
        Ok(())
    }
}
