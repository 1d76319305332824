//! Procedural rules: stored whole, injected whole. Keys: `Table::Rule/<id:u64 BE>`; the next id
//! is the highest stored one plus one.

use super::Engine;
use crate::error::{Error, Result};
use crate::record::{Origin, Rule, RuleStatus};
use crate::store::scan::scan_all;
use crate::store::{Batch, KvStore, Namespace, Table};

/// Superseded is what merging writes, with the rule that absorbed it: not a status to set.
fn refuse_superseded(status: RuleStatus) -> Result<()> {
    if status == RuleStatus::Superseded {
        return Err(Error::InvalidInput(
            "status superseded is set only when a wider rule absorbs this one; set candidate, \
             active or demoted"
                .into(),
        ));
    }
    Ok(())
}

impl<S: KvStore> Engine<S> {
    /// Adds a rule written by `origin`; returns its id. Rules steer the agent, so only the
    /// user or an administrator may write one: any other origin is refused (store its text as
    /// an episode instead).
    pub fn add_rule(
        &mut self,
        ns: &str,
        text: &str,
        observation: &str,
        status: RuleStatus,
        origin: Origin,
        now: i64,
    ) -> Result<u64> {
        let nsc = Namespace::new(ns)?;
        if !origin.trusted() {
            return Err(Error::InvalidInput(format!(
                "a rule from origin {origin} is refused: rules come only from the user or an \
                 administrator (pass origin user or admin), text from elsewhere can be \
                 remembered as an episode"
            )));
        }
        refuse_superseded(status)?;
        if text.trim().is_empty() {
            return Err(Error::InvalidInput("rule text is empty".into()));
        }
        let id = self.rules(ns, &[])?.iter().map(|r| r.id).max().unwrap_or(0) + 1;
        let rule = Rule {
            id,
            text: text.trim().to_string(),
            observation: observation.to_string(),
            status,
            created_at: now,
            updated_at: now,
            evidence: String::new(),
            pattern: String::new(),
            superseded_by: None,
        };
        let mut batch = Batch::new();
        batch.put(nsc.key(Table::Rule, &id.to_be_bytes()), rule.encode());
        self.ensure_namespace(&nsc, &mut batch)?;
        self.write_rules(&nsc, &batch)?;
        Ok(id)
    }

    /// Changes a rule's status (promote a candidate, demote an active rule).
    pub fn set_rule_status(
        &mut self,
        ns: &str,
        id: u64,
        status: RuleStatus,
        now: i64,
    ) -> Result<()> {
        refuse_superseded(status)?;
        let nsc = Namespace::new(ns)?;
        let key = nsc.key(Table::Rule, &id.to_be_bytes());
        let bytes = self.store.get(&key)?.ok_or_else(|| Error::NotFound(format!("rule {id}")))?;
        let mut rule = Rule::decode(&bytes)?;
        let mut batch = Batch::new();
        if rule.status == RuleStatus::Active && status != RuleStatus::Active {
            self.restore_absorbed(&nsc, id, now, &mut batch)?;
        }
        if status != RuleStatus::Superseded {
            rule.superseded_by = None;
        }
        rule.status = status;
        rule.updated_at = now;
        batch.put(key, rule.encode());
        self.write_rules(&nsc, &batch)
    }

    /// Rules with one of `statuses` (all when empty), by id. `&[RuleStatus::Active]` is what a
    /// context gets, whole.
    pub fn rules(&self, ns: &str, statuses: &[RuleStatus]) -> Result<Vec<Rule>> {
        let nsc = Namespace::new(ns)?;
        let mut out = Vec::new();
        scan_all(&self.store, &nsc.table_prefix(Table::Rule), None, |_, v| {
            // An unreadable record is left out (and listed by `quarantined`).
            let Ok(r) = Rule::decode(v) else { return Ok(()) };
            if statuses.is_empty() || statuses.contains(&r.status) {
                out.push(r);
            }
            Ok(())
        })?;
        Ok(out)
    }
}
