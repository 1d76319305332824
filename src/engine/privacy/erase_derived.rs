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

impl<S: KvStore> Engine<S> {
    pub(super) fn restore_derived(&self, ns: &Namespace, p: &mut Plan) -> Result<()> {
        let mut rewrites: BTreeMap<u64, Episode> = BTreeMap::new();
        let gone =
            |p: &Plan, id: u64| p.episodes.contains(&id) || p.dissolved.iter().any(|d| d.0 == id);
        let load = |id: u64, rewrites: &mut BTreeMap<u64, Episode>| -> Result<bool> {
            if rewrites.contains_key(&id) {
                return Ok(true);
            }
            let Some(bytes) = self.store.get(&ns.key(Table::Episode, &id.to_be_bytes()))? else {
                return Ok(false);
            };
            let Ok(e) = Episode::decode(&bytes) else { return Ok(false) };
            rewrites.insert(id, e);
            Ok(true)
        };
        let mut changed = std::collections::BTreeSet::new();
        for (rule, episodes) in &p.unrepresent {
            for &id in episodes {
                if gone(p, id) || !load(id, &mut rewrites)? {
                    continue;
                }
                let e = rewrites.get_mut(&id).expect("loaded");
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
                if gone(p, id) || !load(id, &mut rewrites)? {
                    continue;
                }
                let e = rewrites.get_mut(&id).expect("loaded");
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
