//! Write-time policy: what is worth remembering, and how much.
//!
//! Hard rules discard noise before anything is stored; every kept episode gets an importance in
//! 0–1 with the reason for it. Defaults (seeds 002, 003): failures with a verdict, corrections
//! and surprises are kept at full importance; routine successes are kept but marked low-value,
//! so hundreds of them cannot bury the one lesson.

use crate::record::{Episode, Outcome};

/// The policy's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct WritePolicy {
    /// Texts shorter than this many characters (after trimming) are discarded.
    pub min_chars: usize,
    /// Event types that are never stored (`heartbeat`, `ping`…), compared case-insensitively.
    pub discard_kinds: Vec<String>,
    /// Texts containing any of these (case-insensitive) are discarded.
    pub discard_containing: Vec<String>,
    /// Importance of a routine success (no verdict, no surprise).
    pub routine_importance: f32,
    /// Importance of an episode without an outcome.
    pub default_importance: f32,
    /// What happens to secrets (card numbers, IBANs, keys, passwords; `trust::sensitive`) in
    /// an episode's text, verdict and entities.
    pub secrets: SecretAction,
}

/// What the write policy does with a secret found in an episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretAction {
    /// Replace it by a mask such as `[card …4242]` (the default).
    #[default]
    Mask,
    /// Discard the whole episode.
    Drop,
    /// Store it as written.
    Keep,
}

impl std::str::FromStr for SecretAction {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s {
            "mask" => Ok(SecretAction::Mask),
            "drop" => Ok(SecretAction::Drop),
            "keep" => Ok(SecretAction::Keep),
            _ => Err(crate::error::Error::InvalidInput(format!(
                "secrets {s:?} is not one of mask, drop, keep"
            ))),
        }
    }
}

impl Default for WritePolicy {
    fn default() -> Self {
        Self {
            min_chars: 3,
            discard_kinds: vec!["heartbeat".into(), "ping".into(), "keepalive".into()],
            discard_containing: Vec::new(),
            routine_importance: 0.5,
            default_importance: 0.8,
            secrets: SecretAction::Mask,
        }
    }
}

/// What the policy decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Store it with this importance.
    Keep {
        /// Importance, 0–1.
        importance: f32,
        /// Why.
        reason: &'static str,
    },
    /// Do not store it.
    Discard {
        /// Why.
        reason: String,
    },
}

impl WritePolicy {
    /// Applies the hard rules that change an episode before it is judged: secrets are masked
    /// (or the episode dropped, per [`WritePolicy::secrets`]), and text from an untrusted
    /// origin that reads as instructions is tagged `instruction-like` with trust 0. Returns
    /// the reason when the episode must be discarded.
    pub fn sanitise(&self, e: &mut Episode) -> Option<String> {
        use crate::trust::{instructions, sensitive};
        match self.secrets {
            SecretAction::Keep => {}
            SecretAction::Drop => {
                let fields = std::iter::once(&e.text).chain([&e.verdict]).chain(&e.entities);
                if let Some(kinds) = fields.map(|t| sensitive::find(t)).find(|f| !f.is_empty()) {
                    return Some(format!("holds a secret ({:?})", kinds[0].kind).to_lowercase());
                }
            }
            SecretAction::Mask => {
                for field in std::iter::once(&mut e.text)
                    .chain([&mut e.verdict])
                    .chain(e.entities.iter_mut())
                {
                    let (masked, kinds) = sensitive::mask(field);
                    if !kinds.is_empty() {
                        *field = masked;
                    }
                }
            }
        }
        let origin = crate::record::Origin::of_episode_source(&e.source);
        if !origin.trusted() && instructions::instruction_like(&e.text).is_some() {
            if !e.tags.iter().any(|t| t == instructions::TAG) {
                e.tags.push(instructions::TAG.into());
            }
            e.trust = 0.0;
        }
        None
    }

    /// Decides on `e`. A host-set importance (anything but the default 1.0) is respected for
    /// kept episodes.
    pub fn decide(&self, e: &Episode) -> Decision {
        let text = e.text.trim();
        if text.chars().count() < self.min_chars {
            return Decision::Discard {
                reason: format!("shorter than {} characters", self.min_chars),
            };
        }
        if self.discard_kinds.iter().any(|k| k.eq_ignore_ascii_case(&e.kind)) {
            return Decision::Discard { reason: format!("event type {:?} is noise", e.kind) };
        }
        let lower = text.to_lowercase();
        if let Some(p) = self.discard_containing.iter().find(|p| lower.contains(&p.to_lowercase()))
        {
            return Decision::Discard { reason: format!("contains {p:?}") };
        }
        let has_verdict = !e.verdict.trim().is_empty();
        let (importance, reason) = match e.outcome {
            _ if e.surprise => (1.0, "surprise"),
            Outcome::Failure | Outcome::Partial if has_verdict => (1.0, "failure with a verdict"),
            Outcome::Failure | Outcome::Partial => (0.9, "failure"),
            Outcome::Success if has_verdict => (1.0, "success with a lesson"),
            Outcome::Success => (self.routine_importance, "routine success (low value)"),
            Outcome::Unknown => (self.default_importance, "no outcome"),
        };
        if e.importance != 1.0 {
            return Decision::Keep {
                importance: e.importance.clamp(0.0, 1.0),
                reason: "set by host",
            };
        }
        Decision::Keep { importance, reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_discarded_and_lessons_outrank_routine() {
        let p = WritePolicy::default();
        let mut e = Episode::new("ok", 0);
        assert!(matches!(p.decide(&e), Decision::Discard { .. }));
        e.text = "heartbeat from worker 3".into();
        e.kind = "Heartbeat".into();
        assert!(matches!(p.decide(&e), Decision::Discard { .. }));
        let mut routine = Episode::new("deployed web-app to staging", 0);
        routine.outcome = Outcome::Success;
        let mut lesson = routine.clone();
        lesson.outcome = Outcome::Failure;
        lesson.verdict = "stale lockfile: clear the cache".into();
        let imp = |e: &Episode| match p.decide(e) {
            Decision::Keep { importance, .. } => importance,
            d => panic!("{d:?}"),
        };
        assert!(imp(&lesson) > imp(&routine));
        routine.surprise = true;
        assert_eq!(imp(&routine), 1.0);
    }
}
