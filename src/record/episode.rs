//! Episodes: the append-only log of what happened.
//!
//! Byte format (record kind [`KIND`], fields in this order inside the codec envelope):
//!
//! ```text
//! id:u64 ref:str agent:str kind:str text:str outcome:u8 verdict:str entities:strs
//! tool:str entity_type:str error_class:str stage:str compact_summary:str tier:u8 group:u64
//! status:u8 created_at:i64 last_accessed_at:i64 access_count:u32 source:str trust:f32
//! importance:f32 surprise:u8 tags:strs [expires_at:i64 evidence:(n:u32 u64×n) represented_by:u64]
//! ```
//!
//! The three trailing fields came with compaction; records written before them end after
//! `tags` and read as `expires_at` 0 (never), no evidence, `represented_by` 0.
//!
//! The vector lives apart, under `Table::Vector` (`model_id:str dim:u32 f32 × dim`, then the
//! passages of a long text: [`encode_vectors`]), so that the access updates every recall makes
//! do not rewrite 1.5 KB per hit.

use crate::embed::passages::{Passage, TextVectors, MAX_PASSAGES};
use crate::error::{Error, Result};
use crate::store::codec::{open, seal, Reader, Writer};

/// Record kind of an episode envelope.
pub const KIND: u8 = 1;
/// Record kind of an episode vector envelope.
pub const VECTOR_KIND: u8 = 2;

/// How the episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Not an action, or not known.
    #[default]
    Unknown,
    /// It worked.
    Success,
    /// It failed.
    Failure,
    /// Partly worked.
    Partial,
}

/// Where an episode stands. Only `Raw` and `Active` episodes are indexed and recalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// As recorded.
    #[default]
    Raw,
    /// A compaction summary in use.
    Active,
    /// Replaced (by a compaction summary or a correction). Kept, never recalled.
    Superseded,
    /// Marked wrong by the user. Kept, never recalled.
    Rejected,
}

/// The situation an episode happened in: what retrieval keys on besides text.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Situation {
    /// Tool in use (`git`, `npm`, `sql`…).
    pub tool: String,
    /// Type of the entity acted on (`repo`, `invoice`, `contact`…).
    pub entity_type: String,
    /// Error class, for failures (`timeout`, `auth`, `lockfile`…).
    pub error_class: String,
    /// Workflow stage (`build`, `deploy`, `review`…).
    pub stage: String,
}

/// One episode.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Episode {
    /// Engine-assigned id, increasing per namespace.
    pub id: u64,
    /// The host's own id for it (may be empty).
    pub ref_id: String,
    /// The agent that recorded it.
    pub agent: String,
    /// Event type (`tool_call`, `message`, `decision`…).
    pub kind: String,
    /// What happened, in words: the text that is embedded and searched.
    pub text: String,
    /// How it ended.
    pub outcome: Outcome,
    /// The verdict on a failure or correction ("the cache held a stale lockfile").
    pub verdict: String,
    /// Entities mentioned (names, ids).
    pub entities: Vec<String>,
    /// Situation key.
    pub situation: Situation,
    /// Shorter summary written by compaction (may be empty).
    pub compact_summary: String,
    /// Compaction tier: 0 raw, 1 weekly, 2 monthly.
    pub tier: u8,
    /// Compaction group (0 when none).
    pub group: u64,
    /// Status.
    pub status: Status,
    /// When it happened (ms since the Unix epoch).
    pub created_at: i64,
    /// Last time a recall returned it (ms).
    pub last_accessed_at: i64,
    /// How many recalls returned it.
    pub access_count: u32,
    /// Who or what reported it (`agent`, `user`, `tool:…`).
    pub source: String,
    /// Trust in that source, 0–1.
    pub trust: f32,
    /// Write-time importance, 0–1 (see `engine::policy`).
    pub importance: f32,
    /// The outcome contradicted what was expected.
    pub surprise: bool,
    /// Free tags.
    pub tags: Vec<String>,
    /// When a task memory stops being recalled (ms; 0: never). Expired episodes leave
    /// retrieval and are compacted like the rest.
    pub expires_at: i64,
    /// For a compaction summary: the ids it summarises (its evidence index), oldest first.
    pub evidence: Vec<u64>,
    /// For an episode consolidation evicted from recall: the rule that now represents it
    /// (0 when none).
    pub represented_by: u64,
}

impl Episode {
    /// True for an episode that holds a lesson (a failure or partial success with a verdict,
    /// or a surprise): compaction keeps it recallable, consolidation clusters it.
    pub fn holds_lesson(&self) -> bool {
        (matches!(self.outcome, Outcome::Failure | Outcome::Partial) && !self.verdict.is_empty())
            || self.surprise
    }

    /// The situation it happened in, as a key: `agent|tool|entity_type|error_class|stage`,
    /// lower-cased (`None` when the situation is empty: prose alone never keys a cluster).
    pub fn situation_key(&self) -> Option<String> {
        let s = &self.situation;
        if s.tool.is_empty()
            && s.error_class.is_empty()
            && s.stage.is_empty()
            && s.entity_type.is_empty()
        {
            return None;
        }
        Some(
            format!("{}|{}|{}|{}|{}", self.agent, s.tool, s.entity_type, s.error_class, s.stage)
                .to_lowercase(),
        )
    }

    /// A raw episode with defaults everywhere but the text and time.
    pub fn new(text: impl Into<String>, created_at: i64) -> Self {
        Self {
            id: 0,
            ref_id: String::new(),
            agent: String::new(),
            kind: String::new(),
            text: text.into(),
            outcome: Outcome::Unknown,
            verdict: String::new(),
            entities: Vec::new(),
            situation: Situation::default(),
            compact_summary: String::new(),
            tier: 0,
            group: 0,
            status: Status::Raw,
            created_at,
            last_accessed_at: created_at,
            access_count: 0,
            source: String::new(),
            trust: 1.0,
            importance: 1.0,
            surprise: false,
            tags: Vec::new(),
            expires_at: 0,
            evidence: Vec::new(),
            represented_by: 0,
        }
    }

    /// True when the episode is indexed and may be recalled.
    pub fn is_live(&self) -> bool {
        matches!(self.status, Status::Raw | Status::Active)
    }

    /// True for a superseded episode that compaction summarised or consolidation represented
    /// by a rule: kept for audit and reached only by a recall that asks for cold records.
    pub fn is_cold(&self) -> bool {
        self.status == Status::Superseded && (self.group != 0 || self.represented_by != 0)
    }

    /// True when a task memory's time to live ran out before `now`.
    pub fn expired(&self, now: i64) -> bool {
        self.expires_at != 0 && self.expires_at <= now
    }

    /// Text used for lexical search: the text, verdict, entities and situation.
    pub fn search_text(&self) -> String {
        let s = &self.situation;
        let mut t = self.text.clone();
        for part in
            [&self.verdict, &s.tool, &s.error_class, &s.stage].into_iter().chain(&self.entities)
        {
            if !part.is_empty() {
                t.push(' ');
                t.push_str(part);
            }
        }
        t
    }

    /// Encodes the episode as a sealed envelope.
    pub fn encode(&self) -> Vec<u8> {
        let s = &self.situation;
        // The fixed fields and length prefixes take about 120 bytes; the strings the rest.
        let strings: usize = [&self.ref_id, &self.agent, &self.kind, &self.text, &self.verdict]
            .into_iter()
            .chain([&s.tool, &s.entity_type, &s.error_class, &s.stage])
            .chain([&self.compact_summary, &self.source])
            .chain(self.entities.iter().chain(&self.tags))
            .map(|t| t.len() + 4)
            .sum();
        let mut w = Writer::with_capacity(128 + strings + self.evidence.len() * 8);
        w.u64(self.id).str(&self.ref_id).str(&self.agent).str(&self.kind).str(&self.text);
        w.u8(outcome_code(self.outcome)).str(&self.verdict).strs(&self.entities);
        w.str(&s.tool).str(&s.entity_type).str(&s.error_class).str(&s.stage);
        w.str(&self.compact_summary).u8(self.tier).u64(self.group).u8(status_code(self.status));
        w.i64(self.created_at).i64(self.last_accessed_at).u32(self.access_count);
        w.str(&self.source).f32(self.trust).f32(self.importance).u8(self.surprise as u8);
        w.strs(&self.tags).i64(self.expires_at).u32(self.evidence.len() as u32);
        for id in &self.evidence {
            w.u64(*id);
        }
        w.u64(self.represented_by);
        seal(KIND, &w.finish())
    }

    /// Decodes an envelope written by [`Episode::encode`].
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let what = "episode";
        let mut r = Reader::new(open(bytes, KIND, what)?, what);
        let id = r.u64()?;
        let ref_id = r.str()?.to_string();
        let agent = r.str()?.to_string();
        let kind = r.str()?.to_string();
        let text = r.str()?.to_string();
        let outcome = outcome_from(r.u8()?)?;
        let verdict = r.str()?.to_string();
        let entities = r.strs()?;
        let situation = Situation {
            tool: r.str()?.to_string(),
            entity_type: r.str()?.to_string(),
            error_class: r.str()?.to_string(),
            stage: r.str()?.to_string(),
        };
        let compact_summary = r.str()?.to_string();
        let tier = r.u8()?;
        let group = r.u64()?;
        let status = status_from(r.u8()?)?;
        let created_at = r.i64()?;
        let last_accessed_at = r.i64()?;
        let access_count = r.u32()?;
        let source = r.str()?.to_string();
        let trust = r.f32()?;
        let importance = r.f32()?;
        let surprise = r.u8()? != 0;
        let tags = r.strs()?;
        let (mut expires_at, mut evidence, mut represented_by) = (0, Vec::new(), 0);
        if r.remaining() > 0 {
            expires_at = r.i64()?;
            let n = r.u32()? as usize;
            if n > r.remaining() / 8 {
                return Err(r.corrupt(format!("{n} evidence ids claimed")));
            }
            evidence = (0..n).map(|_| r.u64()).collect::<Result<_>>()?;
            represented_by = r.u64()?;
        }
        r.end()?;
        Ok(Self {
            id,
            ref_id,
            agent,
            kind,
            text,
            outcome,
            verdict,
            entities,
            situation,
            compact_summary,
            tier,
            group,
            status,
            created_at,
            last_accessed_at,
            access_count,
            source,
            trust,
            importance,
            surprise,
            tags,
            expires_at,
            evidence,
            represented_by,
        })
    }
}

/// Encodes an episode's vector with the id of the model that made it.
pub fn encode_vector(model_id: &str, v: &[f32]) -> Vec<u8> {
    encode_vectors(model_id, &TextVectors::single(v.to_vec()))
}

/// Encodes an episode's vectors: its whole vector, then its passages when it has any
/// (`embed::passages`): `count:u32` and per passage `start:u32 end:u32 f32 × dim` (byte offsets
/// of the window in the episode's text). A record without passages ends after the whole vector,
/// as every record did before passages existed.
pub fn encode_vectors(model_id: &str, v: &TextVectors) -> Vec<u8> {
    let mut w = Writer::new();
    w.str(model_id).u32(v.whole.len() as u32);
    for x in &v.whole {
        w.f32(*x);
    }
    if !v.passages.is_empty() {
        w.u32(v.passages.len() as u32);
        for p in &v.passages {
            w.u32(p.start).u32(p.end);
            for x in &p.vector {
                w.f32(*x);
            }
        }
    }
    seal(VECTOR_KIND, &w.finish())
}

/// Decodes a vector record into (model id, whole vector).
pub fn decode_vector(bytes: &[u8]) -> Result<(String, Vec<f32>)> {
    decode_vectors(bytes).map(|(model, v)| (model, v.whole))
}

/// Decodes a vector record into (model id, whole vector and passages).
pub fn decode_vectors(bytes: &[u8]) -> Result<(String, TextVectors)> {
    let what = "episode vector";
    let mut r = Reader::new(open(bytes, VECTOR_KIND, what)?, what);
    let model = r.str()?.to_string();
    let dim = r.u32()? as usize;
    if dim > 65_536 {
        return Err(Error::Corrupt { what: what.into(), detail: format!("dimension {dim}") });
    }
    let floats = |r: &mut Reader| -> Result<Vec<f32>> {
        let raw = r.take_bytes(dim * 4)?;
        Ok(raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    };
    let whole = floats(&mut r)?;
    let mut passages = Vec::new();
    if r.remaining() > 0 {
        let count = r.u32()? as usize;
        if count == 0 || count > MAX_PASSAGES {
            return Err(Error::Corrupt { what: what.into(), detail: format!("{count} passages") });
        }
        for _ in 0..count {
            let (start, end) = (r.u32()?, r.u32()?);
            if end < start {
                return Err(Error::Corrupt {
                    what: what.into(),
                    detail: format!("passage ends at {end} before it starts at {start}"),
                });
            }
            passages.push(Passage { start, end, vector: floats(&mut r)? });
        }
    }
    r.end()?;
    Ok((model, TextVectors { whole, passages }))
}

fn outcome_code(o: Outcome) -> u8 {
    match o {
        Outcome::Unknown => 0,
        Outcome::Success => 1,
        Outcome::Failure => 2,
        Outcome::Partial => 3,
    }
}

fn outcome_from(c: u8) -> Result<Outcome> {
    Ok(match c {
        0 => Outcome::Unknown,
        1 => Outcome::Success,
        2 => Outcome::Failure,
        3 => Outcome::Partial,
        _ => return Err(bad("outcome", c)),
    })
}

pub(crate) fn status_code(s: Status) -> u8 {
    match s {
        Status::Raw => 0,
        Status::Active => 1,
        Status::Superseded => 2,
        Status::Rejected => 3,
    }
}

pub(crate) fn status_from(c: u8) -> Result<Status> {
    Ok(match c {
        0 => Status::Raw,
        1 => Status::Active,
        2 => Status::Superseded,
        3 => Status::Rejected,
        _ => return Err(bad("status", c)),
    })
}

fn bad(field: &str, c: u8) -> Error {
    Error::Corrupt { what: "episode".into(), detail: format!("unknown {field} code {c}") }
}

impl std::str::FromStr for Outcome {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "" | "unknown" => Outcome::Unknown,
            "success" | "ok" | "succeeded" => Outcome::Success,
            "failure" | "fail" | "failed" | "error" => Outcome::Failure,
            "partial" => Outcome::Partial,
            other => {
                return Err(Error::InvalidInput(format!(
                    "outcome {other:?} is not one of success, failure, partial, unknown"
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn episodes_and_vectors_round_trip() {
        let mut e = Episode::new("deploy failed: stale lockfile", 1_700_000_000_000);
        e.id = 42;
        e.outcome = Outcome::Failure;
        e.verdict = "clear the cache first".into();
        e.entities = vec!["web-app".into(), "npm".into()];
        e.situation.tool = "npm".into();
        e.tags = vec!["ci".into()];
        e.surprise = true;
        e.status = Status::Active;
        assert_eq!(Episode::decode(&e.encode()).unwrap(), e);
        let v = encode_vector("m@1", &[0.5, -0.25]);
        assert_eq!(decode_vector(&v).unwrap(), ("m@1".to_string(), vec![0.5, -0.25]));
        assert_eq!(Episode::decode(&v).unwrap_err().code(), "CORRUPT");
    }
}
