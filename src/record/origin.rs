//! Where a write came from, and how far the engine trusts it.
//!
//! Every write names its origin. Only the user and an administrator are trusted: text from an
//! agent, a tool's output, a web page, an email or an unknown origin may be stored as an
//! episode (flagged as untrusted, see `trust::instructions`), and may state facts only as
//! `implicit`, the lowest source; it never overwrites or supersedes what a trusted origin
//! set, and never becomes a rule. Unlabelled input is `unknown`.
//!
//! Byte form: one `u8` (the discriminants below).

use crate::error::{Error, Result};

/// Who said it. A lower-priority source never overwrites a higher-priority one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Extracted from behaviour or conversation by the engine or an agent.
    Implicit = 1,
    /// Set by an administrator or the host application.
    Admin = 2,
    /// Stated by the user as a command ("remember that…").
    Explicit = 3,
}

/// Who or what a write came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Not said (the default): untrusted.
    #[default]
    Unknown = 0,
    /// The user, directly (typed, clicked, confirmed).
    User = 1,
    /// An administrator or the host application's own configuration.
    Admin = 2,
    /// The agent, in its own words (which may repeat what it read).
    Agent = 3,
    /// A tool's output.
    Tool = 4,
    /// A web page.
    Web = 5,
    /// An email or another message from a third party.
    Email = 6,
}

impl Origin {
    /// The user and administrators; everything else is untrusted.
    pub fn trusted(self) -> bool {
        matches!(self, Origin::User | Origin::Admin)
    }

    /// The highest fact source this origin may write: explicit for the user, admin for an
    /// administrator, implicit for every untrusted origin.
    pub fn max_source(self) -> Source {
        match self {
            Origin::User => Source::Explicit,
            Origin::Admin => Source::Admin,
            _ => Source::Implicit,
        }
    }

    /// The origin of a record written before origins were stored: what its source implies.
    pub fn of_legacy_source(source: Source) -> Self {
        match source {
            Source::Explicit => Origin::User,
            Source::Admin => Origin::Admin,
            Source::Implicit => Origin::Agent,
        }
    }

    /// The origin an episode's free-form `source` names: its first word, before any `:`
    /// (`tool:git` is a tool, `email:ana@x` an email); anything else is unknown.
    pub fn of_episode_source(source: &str) -> Self {
        let head = source.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
        head.parse().unwrap_or(Origin::Unknown)
    }

    /// The byte form.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Reads the byte form.
    pub fn from_code(c: u8, what: &str) -> Result<Self> {
        Ok(match c {
            0 => Origin::Unknown,
            1 => Origin::User,
            2 => Origin::Admin,
            3 => Origin::Agent,
            4 => Origin::Tool,
            5 => Origin::Web,
            6 => Origin::Email,
            _ => return Err(Error::Corrupt { what: what.into(), detail: format!("origin {c}") }),
        })
    }
}

impl std::str::FromStr for Origin {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "unknown" | "" => Origin::Unknown,
            "user" => Origin::User,
            "admin" => Origin::Admin,
            "agent" => Origin::Agent,
            "tool" => Origin::Tool,
            "web" => Origin::Web,
            "email" => Origin::Email,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "origin {s:?} is not one of user, admin, agent, tool, web, email, unknown"
                )))
            }
        })
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = serde_json::to_value(self).ok();
        f.write_str(s.as_ref().and_then(|v| v.as_str()).unwrap_or("unknown"))
    }
}
