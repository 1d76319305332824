//! Which episodes a recall may return: agent, entity, window, tags, statuses, tiers, kinds and
//! situation fields, checked first on the fields every episode keeps in memory ([`Hot`]) and
//! then, when a field needs it, on the whole episode.

use crate::engine::episodes::Hot;
use crate::record::{Episode, Status};
use crate::time::Window;

/// Which episodes a recall may return. Empty fields do not filter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only this agent's episodes.
    pub agent: Option<String>,
    /// Only episodes naming this entity (case-insensitive).
    pub entity: Option<String>,
    /// Only episodes created inside this window.
    pub window: Option<Window>,
    /// Only episodes carrying every one of these tags.
    pub tags: Vec<String>,
    /// Only these statuses (default: raw and active — the live ones; others are not indexed).
    pub statuses: Vec<Status>,
    /// Only these compaction tiers.
    pub tiers: Vec<u8>,
    /// Only these event types.
    pub kinds: Vec<String>,
    /// Situation: tool.
    pub tool: Option<String>,
    /// Situation: entity type.
    pub entity_type: Option<String>,
    /// Situation: error class.
    pub error_class: Option<String>,
    /// Situation: workflow stage.
    pub stage: Option<String>,
}

impl Filter {
    /// True when no field filters.
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    /// True when the fields kept for every episode ([`Hot`]) pass; [`Filter::matches`] must
    /// still be asked when [`Filter::needs_episode`].
    pub(crate) fn matches_hot(&self, h: &Hot) -> bool {
        self.window.is_none_or(|w| w.contains(h.created_at))
            && (self.statuses.is_empty() || self.statuses.contains(&h.status))
            && (self.tiers.is_empty() || self.tiers.contains(&h.tier))
    }

    /// True when some field needs the whole episode to check.
    pub(crate) fn needs_episode(&self) -> bool {
        self.agent.is_some()
            || self.entity.is_some()
            || !self.tags.is_empty()
            || !self.kinds.is_empty()
            || self.tool.is_some()
            || self.entity_type.is_some()
            || self.error_class.is_some()
            || self.stage.is_some()
    }

    /// True when `e` passes.
    pub fn matches(&self, e: &Episode) -> bool {
        let eq = |want: &Option<String>, have: &str| {
            want.as_ref().is_none_or(|w| w.eq_ignore_ascii_case(have))
        };
        eq(&self.agent, &e.agent)
            && self
                .entity
                .as_ref()
                .is_none_or(|w| e.entities.iter().any(|x| x.eq_ignore_ascii_case(w)))
            && self.window.is_none_or(|w| w.contains(e.created_at))
            && self.tags.iter().all(|t| e.tags.contains(t))
            && (self.statuses.is_empty() || self.statuses.contains(&e.status))
            && (self.tiers.is_empty() || self.tiers.contains(&e.tier))
            && (self.kinds.is_empty() || self.kinds.iter().any(|k| k.eq_ignore_ascii_case(&e.kind)))
            && eq(&self.tool, &e.situation.tool)
            && eq(&self.entity_type, &e.situation.entity_type)
            && eq(&self.error_class, &e.situation.error_class)
            && eq(&self.stage, &e.situation.stage)
    }
}
