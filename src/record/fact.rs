//! Semantic facts (versioned key → value) and entity triples.
//!
//! Fact byte format (kind [`FACT_KIND`]):
//! `key:str value:str source:u8 confidence:f32 policy:u8 version:u32 updated_at:i64
//!  expires_at:opt_i64 origin:u8`. Records written before origins were stored end after
//! `expires_at`; they read with the origin their source implies
//! ([`Origin::of_legacy_source`]).
//! Triple byte format (kind [`TRIPLE_KIND`]):
//! `subject:str predicate:str object:str confidence:f32 source:u8 valid_from:i64
//!  valid_to:opt_i64 updated_at:i64`.

use crate::error::{Error, Result};
use crate::record::{Origin, Source};
use crate::store::codec::{open, seal, Reader, Writer};

/// Record kind of a fact envelope.
pub const FACT_KIND: u8 = 3;
/// Record kind of a triple envelope.
pub const TRIPLE_KIND: u8 = 4;

/// Whether a fact may be put in front of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// Injected into context automatically.
    AutoInject,
    /// Only when asked for explicitly.
    Sensitive,
    /// Never injected (kept for the host's own use).
    NeverInject,
}

/// One version of a fact.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    /// The key (`preferred_language`, `billing.currency`…).
    pub key: String,
    /// The value.
    pub value: String,
    /// Who set it.
    pub source: Source,
    /// Confidence, 0–1.
    pub confidence: f32,
    /// Injection policy.
    pub policy: Policy,
    /// Version number, from 1.
    pub version: u32,
    /// When this version was written (ms).
    pub updated_at: i64,
    /// When it stops holding (task memory), if ever (ms).
    pub expires_at: Option<i64>,
    /// Where the write came from.
    pub origin: Origin,
}

impl Fact {
    /// True when the fact has expired at `now`.
    pub fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|t| now >= t)
    }

    /// Sealed envelope.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.str(&self.key).str(&self.value).u8(self.source as u8).f32(self.confidence);
        w.u8(policy_code(self.policy)).u32(self.version).i64(self.updated_at);
        w.opt_i64(self.expires_at).u8(self.origin.code());
        seal(FACT_KIND, &w.finish())
    }

    /// Decodes [`Fact::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let what = "fact";
        let mut r = Reader::new(open(bytes, FACT_KIND, what)?, what);
        let mut f = Fact {
            key: r.str()?.to_string(),
            value: r.str()?.to_string(),
            source: source_from(r.u8()?, what)?,
            confidence: r.f32()?,
            policy: policy_from(r.u8()?)?,
            version: r.u32()?,
            updated_at: r.i64()?,
            expires_at: r.opt_i64()?,
            origin: Origin::Unknown,
        };
        f.origin = match r.remaining() {
            0 => Origin::of_legacy_source(f.source),
            _ => Origin::from_code(r.u8()?, what)?,
        };
        r.end()?;
        Ok(f)
    }
}

/// An entity triple, valid from `valid_from` until `valid_to` (open when `None`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Triple {
    /// Subject entity.
    pub subject: String,
    /// Predicate (`works_at`, `uses`…); one object per (subject, predicate) holds at a time.
    pub predicate: String,
    /// Object.
    pub object: String,
    /// Confidence, 0–1; raised by agreeing assertions.
    pub confidence: f32,
    /// Who asserted it.
    pub source: Source,
    /// Since when it holds (ms).
    pub valid_from: i64,
    /// When a contradicting triple ended it (ms).
    pub valid_to: Option<i64>,
    /// Last assertion (ms).
    pub updated_at: i64,
}

impl Triple {
    /// Sealed envelope.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.str(&self.subject).str(&self.predicate).str(&self.object).f32(self.confidence);
        w.u8(self.source as u8).i64(self.valid_from).opt_i64(self.valid_to).i64(self.updated_at);
        seal(TRIPLE_KIND, &w.finish())
    }

    /// Decodes [`Triple::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let what = "triple";
        let mut r = Reader::new(open(bytes, TRIPLE_KIND, what)?, what);
        let t = Triple {
            subject: r.str()?.to_string(),
            predicate: r.str()?.to_string(),
            object: r.str()?.to_string(),
            confidence: r.f32()?,
            source: source_from(r.u8()?, what)?,
            valid_from: r.i64()?,
            valid_to: r.opt_i64()?,
            updated_at: r.i64()?,
        };
        r.end()?;
        Ok(t)
    }
}

fn policy_code(p: Policy) -> u8 {
    match p {
        Policy::AutoInject => 0,
        Policy::Sensitive => 1,
        Policy::NeverInject => 2,
    }
}

fn policy_from(c: u8) -> Result<Policy> {
    Ok(match c {
        0 => Policy::AutoInject,
        1 => Policy::Sensitive,
        2 => Policy::NeverInject,
        _ => return Err(Error::Corrupt { what: "fact".into(), detail: format!("policy {c}") }),
    })
}

fn source_from(c: u8, what: &str) -> Result<Source> {
    Ok(match c {
        1 => Source::Implicit,
        2 => Source::Admin,
        3 => Source::Explicit,
        _ => return Err(Error::Corrupt { what: what.into(), detail: format!("source {c}") }),
    })
}

impl std::str::FromStr for Source {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "implicit" => Ok(Source::Implicit),
            "admin" => Ok(Source::Admin),
            "explicit" => Ok(Source::Explicit),
            _ => Err(Error::InvalidInput(format!(
                "source {s:?} is not one of explicit, admin, implicit"
            ))),
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto-inject" | "auto" => Ok(Policy::AutoInject),
            "sensitive" => Ok(Policy::Sensitive),
            "never-inject" | "never" => Ok(Policy::NeverInject),
            _ => Err(Error::InvalidInput(format!(
                "policy {s:?} is not one of auto-inject, sensitive, never-inject"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_and_triples_round_trip() {
        let f = Fact {
            key: "lang".into(),
            value: "it".into(),
            source: Source::Explicit,
            confidence: 0.9,
            policy: Policy::Sensitive,
            version: 3,
            updated_at: 5,
            expires_at: Some(9),
            origin: Origin::Web,
        };
        assert_eq!(Fact::decode(&f.encode()).unwrap(), f);
        let t = Triple {
            subject: "ana".into(),
            predicate: "works_at".into(),
            object: "acme".into(),
            confidence: 0.6,
            source: Source::Implicit,
            valid_from: 1,
            valid_to: None,
            updated_at: 2,
        };
        assert_eq!(Triple::decode(&t.encode()).unwrap(), t);
        assert_eq!(Fact::decode(&t.encode()).unwrap_err().code(), "CORRUPT");
    }
}
