//! Outcome tracking records: which entries a recall returned, and how the task it served
//! ended.
//!
//! - `Table::Retrieval/<id:u64 BE>` (kind [`RETRIEVAL_KIND`]), written in the same batch as
//!   the recall's access updates, append-only: `at:i64 episodes: n:u32 u64×n rules: n:u32
//!   u64×n`. `id = now_ms << 10 | seq` (like signals), so ids sort by time and stay exact in
//!   JavaScript.
//! - `Table::Outcome/<retrieval id>` (kind [`OUTCOME_KIND`]): `outcome:u8 (1 success,
//!   2 failure, 3 partial) at:i64 [reporter:u8 (0 the host, 1 an agent)]`. A later outcome
//!   for the same retrieval replaces it. Records written before the reporter byte read as the
//!   host's.
//! - `Table::Meta/outcome-weights` (kind [`WEIGHTS_KIND`]): `n:u32 (episode:u64
//!   weight:f32)×n`, the episodes outcome tracking found harmful and the factor recall
//!   multiplies their score by.

use crate::error::Result;
use crate::record::Outcome;
use crate::store::codec::{open, seal, Reader, Writer};

/// Record kind of a retrieval log entry.
pub const RETRIEVAL_KIND: u8 = 10;
/// Record kind of an outcome.
pub const OUTCOME_KIND: u8 = 11;
/// Record kind of the outcome weights.
pub const WEIGHTS_KIND: u8 = 12;

/// Who reported how a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reporter {
    /// The host application: its outcomes count for every entry, rules included.
    Host = 0,
    /// An agent through a channel anyone's text can reach (the MCP server): its outcomes may
    /// down-weight episodes but never count against a rule, so a prompt-injected agent cannot
    /// get what the user taught demoted.
    Agent = 1,
}

/// What one recall returned.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Retrieval {
    /// When (ms).
    pub at: i64,
    /// Episodes returned.
    pub episodes: Vec<u64>,
    /// Rules active (injected whole into every context) at the time.
    pub rules: Vec<u64>,
}

fn ids(w: &mut Writer, v: &[u64]) {
    w.u32(v.len() as u32);
    for x in v {
        w.u64(*x);
    }
}

fn read_ids(r: &mut Reader) -> Result<Vec<u64>> {
    let n = r.u32()? as usize;
    if n > r.remaining() / 8 {
        return Err(r.corrupt(format!("{n} ids claimed")));
    }
    (0..n).map(|_| r.u64()).collect()
}

impl Retrieval {
    /// Sealed envelope.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.i64(self.at);
        ids(&mut w, &self.episodes);
        ids(&mut w, &self.rules);
        seal(RETRIEVAL_KIND, &w.finish())
    }

    /// Decodes [`Retrieval::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(open(bytes, RETRIEVAL_KIND, "retrieval")?, "retrieval");
        let at = r.i64()?;
        let episodes = read_ids(&mut r)?;
        let rules = read_ids(&mut r)?;
        r.end()?;
        Ok(Retrieval { at, episodes, rules })
    }
}

/// An outcome record's bytes.
pub fn encode_outcome(outcome: Outcome, at: i64, reporter: Reporter) -> Vec<u8> {
    let code = match outcome {
        Outcome::Success => 1,
        Outcome::Failure => 2,
        Outcome::Partial => 3,
        Outcome::Unknown => 0,
    };
    let mut w = Writer::new();
    w.u8(code).i64(at).u8(reporter as u8);
    seal(OUTCOME_KIND, &w.finish())
}

/// Decodes [`encode_outcome`] output.
pub fn decode_outcome(bytes: &[u8]) -> Result<(Outcome, i64, Reporter)> {
    let mut r = Reader::new(open(bytes, OUTCOME_KIND, "outcome")?, "outcome");
    let o = match r.u8()? {
        1 => Outcome::Success,
        2 => Outcome::Failure,
        3 => Outcome::Partial,
        _ => Outcome::Unknown,
    };
    let at = r.i64()?;
    // Absent (a record from before the byte): the host's. Any value but 0 is read as an
    // agent's, so an unknown one is given the least trust.
    let reporter =
        if r.remaining() == 0 || r.u8()? == 0 { Reporter::Host } else { Reporter::Agent };
    r.end()?;
    Ok((o, at, reporter))
}

/// The outcome weights' bytes.
pub fn encode_weights(weights: &[(u64, f32)]) -> Vec<u8> {
    let mut w = Writer::new();
    w.u32(weights.len() as u32);
    for (id, f) in weights {
        w.u64(*id).f32(*f);
    }
    seal(WEIGHTS_KIND, &w.finish())
}

/// Decodes [`encode_weights`] output.
pub fn decode_weights(bytes: &[u8]) -> Result<Vec<(u64, f32)>> {
    let mut r = Reader::new(open(bytes, WEIGHTS_KIND, "outcome weights")?, "outcome weights");
    let n = r.u32()? as usize;
    if n > r.remaining() / 12 {
        return Err(r.corrupt(format!("{n} weights claimed")));
    }
    let out = (0..n).map(|_| Ok((r.u64()?, r.f32()?))).collect::<Result<_>>()?;
    r.end()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_records_round_trip() {
        let r = Retrieval { at: 5, episodes: vec![1, 2], rules: vec![7] };
        assert_eq!(Retrieval::decode(&r.encode()).unwrap(), r);
        for reporter in [Reporter::Host, Reporter::Agent] {
            assert_eq!(
                decode_outcome(&encode_outcome(Outcome::Failure, 9, reporter)).unwrap(),
                (Outcome::Failure, 9, reporter)
            );
        }
        // A record written before the reporter byte is the host's.
        let mut w = Writer::new();
        w.u8(2).i64(9);
        let old = seal(OUTCOME_KIND, &w.finish());
        assert_eq!(decode_outcome(&old).unwrap(), (Outcome::Failure, 9, Reporter::Host));
        let w = vec![(3, 0.5f32)];
        assert_eq!(decode_weights(&encode_weights(&w)).unwrap(), w);
    }
}
