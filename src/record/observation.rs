//! Observations: repeated behaviour the detector counted, shown to the user to confirm or
//! reject, and promoted to procedural rules when strong enough.
//!
//! Key: `Table::Observation/<id:u64 BE>`; its embedding (for near-duplicate checks and
//! recall) lives apart under `Table::ObservationVector/<id>` so rejecting one deletes it.
//!
//! Byte format (kind [`KIND`]):
//!
//! ```text
//! id:u64 pattern:str category:str agent:str quote:str evidence:str occurrences:u32
//! opportunities:u32 contradictions:u32 consistency:f32 counted:str boost:u8
//! promotion_candidate:u8 support: n:u32 u64×n status:u8 merged_into:u64 created_at:i64
//! updated_at:i64 confirmed_at:opt_i64 rule:opt_i64 first_seen:i64 last_seen:i64
//! phrased_by:str [episodes: n:u32 u64×n]
//! ```
//!
//! `episodes` came with consolidation (the episodes a lesson observation was clustered from);
//! records written before it end after `phrased_by` and read as none.

use crate::error::{Error, Result};
use crate::record::confidence::Confidence;
use crate::record::signal::Category;
use crate::store::codec::{open, seal, Reader, Writer};

/// Record kind of an observation envelope.
pub const KIND: u8 = 9;

/// Where an observation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObservationStatus {
    /// Proposed; counts are refreshed each night.
    Open,
    /// The user said it is wrong: never proposed again, its embedding deleted.
    Rejected,
    /// Folded into another observation (`merged_into`) by consolidation.
    Merged,
}

/// One observation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// Engine-assigned id.
    pub id: u64,
    /// The machine-readable pattern key (`learn::pattern`).
    pub pattern: String,
    /// What it is about.
    pub category: Category,
    /// The agent it is about.
    pub agent: String,
    /// The lesson, at most 25 words.
    pub quote: String,
    /// The numbers behind it, at most 40 words.
    pub evidence: String,
    /// Distinct events where it happened.
    pub occurrences: u32,
    /// Events where it could have.
    pub opportunities: u32,
    /// Events where the opposite happened.
    pub contradictions: u32,
    /// occurrences / opportunities.
    pub consistency: f32,
    /// The band the counts give.
    pub counted: Confidence,
    /// Bands added by the user's "right" feedback.
    pub boost: u8,
    /// It implies a clear action rule.
    pub promotion_candidate: bool,
    /// Signals where it happened.
    pub support: Vec<u64>,
    /// Status.
    pub status: ObservationStatus,
    /// The observation it was merged into (0 when none).
    pub merged_into: u64,
    /// First found (ms).
    pub created_at: i64,
    /// Last recount (ms).
    pub updated_at: i64,
    /// When the user said it is right.
    pub confirmed_at: Option<i64>,
    /// The rule promoted from it.
    pub rule: Option<u64>,
    /// First occurrence (ms).
    pub first_seen: i64,
    /// Last occurrence (ms).
    pub last_seen: i64,
    /// `engine`, or `llm` when the host's model phrased quote and evidence (and they passed
    /// the checks).
    pub phrased_by: String,
    /// Episodes it was clustered from (a lesson observation of consolidation; empty for one
    /// counted from signals).
    pub episodes: Vec<u64>,
}

impl Observation {
    /// A new open observation found at `now` (counts, texts and evidence to be filled in).
    pub fn open(id: u64, pattern: String, category: Category, agent: String, now: i64) -> Self {
        Observation {
            id,
            pattern,
            category,
            agent,
            quote: String::new(),
            evidence: String::new(),
            occurrences: 0,
            opportunities: 0,
            contradictions: 0,
            consistency: 0.0,
            counted: Confidence::Low,
            boost: 0,
            promotion_candidate: false,
            support: Vec::new(),
            status: ObservationStatus::Open,
            merged_into: 0,
            created_at: now,
            updated_at: now,
            confirmed_at: None,
            rule: None,
            first_seen: now,
            last_seen: now,
            phrased_by: "engine".into(),
            episodes: Vec::new(),
        }
    }

    /// The confidence that counts: the counted band raised once per "right".
    pub fn confidence(&self) -> Confidence {
        (0..self.boost).fold(self.counted, |c, _| c.raised())
    }

    /// Sealed envelope.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.u64(self.id).str(&self.pattern).str(self.category.name()).str(&self.agent);
        w.str(&self.quote).str(&self.evidence).u32(self.occurrences).u32(self.opportunities);
        w.u32(self.contradictions).f32(self.consistency).str(self.counted.name()).u8(self.boost);
        w.u8(u8::from(self.promotion_candidate)).u32(self.support.len() as u32);
        for id in &self.support {
            w.u64(*id);
        }
        let status = match self.status {
            ObservationStatus::Open => 0,
            ObservationStatus::Rejected => 1,
            ObservationStatus::Merged => 2,
        };
        w.u8(status).u64(self.merged_into).i64(self.created_at).i64(self.updated_at);
        w.opt_i64(self.confirmed_at).opt_i64(self.rule.map(|r| r as i64));
        w.i64(self.first_seen).i64(self.last_seen).str(&self.phrased_by);
        w.u32(self.episodes.len() as u32);
        for id in &self.episodes {
            w.u64(*id);
        }
        seal(KIND, &w.finish())
    }

    /// Decodes [`Observation::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let what = "observation";
        let mut r = Reader::new(open(bytes, KIND, what)?, what);
        let id = r.u64()?;
        let pattern = r.str()?.to_string();
        let category = r.str()?.parse().map_err(|e: Error| r.corrupt(e.to_string()))?;
        let agent = r.str()?.to_string();
        let quote = r.str()?.to_string();
        let evidence = r.str()?.to_string();
        let (occurrences, opportunities, contradictions) = (r.u32()?, r.u32()?, r.u32()?);
        let consistency = r.f32()?;
        let counted = Confidence::from_name(r.str()?)
            .ok_or_else(|| r.corrupt("unknown confidence".into()))?;
        let boost = r.u8()?;
        let promotion_candidate = r.u8()? == 1;
        let n = r.u32()? as usize;
        if n > r.remaining() / 8 {
            return Err(r.corrupt(format!("{n} support ids claimed")));
        }
        let support = (0..n).map(|_| r.u64()).collect::<Result<_>>()?;
        let status = match r.u8()? {
            0 => ObservationStatus::Open,
            1 => ObservationStatus::Rejected,
            2 => ObservationStatus::Merged,
            s => return Err(r.corrupt(format!("status {s}"))),
        };
        let mut o = Observation {
            id,
            pattern,
            category,
            agent,
            quote,
            evidence,
            occurrences,
            opportunities,
            contradictions,
            consistency,
            counted,
            boost,
            promotion_candidate,
            support,
            status,
            merged_into: r.u64()?,
            created_at: r.i64()?,
            updated_at: r.i64()?,
            confirmed_at: r.opt_i64()?,
            rule: r.opt_i64()?.map(|x| x as u64),
            first_seen: r.i64()?,
            last_seen: r.i64()?,
            phrased_by: r.str()?.to_string(),
            episodes: Vec::new(),
        };
        if r.remaining() > 0 {
            let n = r.u32()? as usize;
            if n > r.remaining() / 8 {
                return Err(r.corrupt(format!("{n} episode ids claimed")));
            }
            o.episodes = (0..n).map(|_| r.u64()).collect::<Result<_>>()?;
        }
        r.end()?;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_round_trip() {
        let o = Observation {
            id: 3,
            pattern: "email|removed:semicolon|".into(),
            category: Category::WritingStyle,
            agent: "email".into(),
            quote: "Never use semicolons".into(),
            evidence: "removed in 9 of 10 drafts".into(),
            occurrences: 9,
            opportunities: 10,
            contradictions: 0,
            consistency: 0.9,
            counted: Confidence::High,
            boost: 1,
            promotion_candidate: true,
            support: vec![1, 2, 3],
            status: ObservationStatus::Open,
            merged_into: 0,
            created_at: 10,
            updated_at: 20,
            confirmed_at: Some(15),
            rule: Some(4),
            first_seen: 1,
            last_seen: 9,
            phrased_by: "engine".into(),
            episodes: vec![4, 5],
        };
        assert_eq!(Observation::decode(&o.encode()).unwrap(), o);
        assert_eq!(o.confidence(), Confidence::VeryHigh);
    }
}
