//! Procedural rules: promoted from observations, injected whole.
//!
//! Byte format (kind [`KIND`]): `id:u64 text:str observation:str status:u8 created_at:i64
//! updated_at:i64 [evidence:str pattern:str [superseded_by:u64]]`. Status 0 candidate,
//! 1 active, 2 demoted, 3 superseded. `evidence` and `pattern` came with promotion from
//! observations, `superseded_by` (0 = none) with rule merging; records written before them end
//! earlier and read as empty / none.

use crate::error::{Error, Result};
use crate::store::codec::{open, seal, Reader, Writer};

/// Record kind of a rule envelope.
pub const KIND: u8 = 5;

/// Where a rule stands. Only active rules are injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleStatus {
    /// Proposed, not yet injected.
    Candidate,
    /// Injected whole into every context.
    Active,
    /// No longer injected (kept for the record).
    Demoted,
    /// Merged into a wider rule that says the same and more (`superseded_by`); not injected,
    /// kept with its history, active again if that rule is demoted.
    Superseded,
}

/// One rule.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Engine-assigned id.
    pub id: u64,
    /// The rule, as it is injected.
    pub text: String,
    /// The observation it was promoted from (may be empty).
    pub observation: String,
    /// Status.
    pub status: RuleStatus,
    /// Created (ms).
    pub created_at: i64,
    /// Last status change (ms).
    pub updated_at: i64,
    /// The numbers behind it, for a promoted rule ("removed in 9 of 10 drafts…").
    pub evidence: String,
    /// The machine-readable pattern key it was promoted from (`learn::pattern`), or empty.
    pub pattern: String,
    /// The rule that absorbed it (status superseded).
    pub superseded_by: Option<u64>,
}

impl Rule {
    /// Sealed envelope.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        let status = match self.status {
            RuleStatus::Candidate => 0,
            RuleStatus::Active => 1,
            RuleStatus::Demoted => 2,
            RuleStatus::Superseded => 3,
        };
        w.u64(self.id).str(&self.text).str(&self.observation).u8(status);
        w.i64(self.created_at).i64(self.updated_at).str(&self.evidence).str(&self.pattern);
        w.u64(self.superseded_by.unwrap_or(0));
        seal(KIND, &w.finish())
    }

    /// Decodes [`Rule::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let what = "rule";
        let mut r = Reader::new(open(bytes, KIND, what)?, what);
        let id = r.u64()?;
        let text = r.str()?.to_string();
        let observation = r.str()?.to_string();
        let status = match r.u8()? {
            0 => RuleStatus::Candidate,
            1 => RuleStatus::Active,
            2 => RuleStatus::Demoted,
            3 => RuleStatus::Superseded,
            c => return Err(Error::Corrupt { what: what.into(), detail: format!("status {c}") }),
        };
        let (created_at, updated_at) = (r.i64()?, r.i64()?);
        let (evidence, pattern) = if r.remaining() > 0 {
            (r.str()?.to_string(), r.str()?.to_string())
        } else {
            (String::new(), String::new())
        };
        let superseded_by =
            if r.remaining() > 0 { Some(r.u64()?).filter(|x| *x != 0) } else { None };
        let rule = Rule {
            id,
            text,
            observation,
            status,
            created_at,
            updated_at,
            evidence,
            pattern,
            superseded_by,
        };
        r.end()?;
        Ok(rule)
    }
}

impl std::str::FromStr for RuleStatus {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "candidate" => Ok(RuleStatus::Candidate),
            "active" => Ok(RuleStatus::Active),
            "demoted" => Ok(RuleStatus::Demoted),
            "superseded" => Ok(RuleStatus::Superseded),
            _ => Err(Error::InvalidInput(format!(
                "rule status {s:?} is not one of candidate, active, demoted, superseded"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_round_trip() {
        let r = Rule {
            id: 7,
            text: "Run the linter before committing".into(),
            observation: "obs-3".into(),
            status: RuleStatus::Active,
            created_at: 1,
            updated_at: 2,
            evidence: "removed in 9 of 10 drafts".into(),
            pattern: "email|removed:semicolon|".into(),
            superseded_by: None,
        };
        assert_eq!(Rule::decode(&r.encode()).unwrap(), r);
        let merged = Rule { status: RuleStatus::Superseded, superseded_by: Some(9), ..r.clone() };
        assert_eq!(Rule::decode(&merged.encode()).unwrap(), merged);
        // A record written before `superseded_by` existed ends after `pattern`.
        let mut w = Writer::new();
        w.u64(r.id).str(&r.text).str(&r.observation).u8(1).i64(1).i64(2);
        w.str(&r.evidence).str(&r.pattern);
        assert_eq!(Rule::decode(&seal(KIND, &w.finish())).unwrap(), r);
    }
}
