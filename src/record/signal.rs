//! Behaviour signals: what the user did with an agent's work (edited a draft, rejected a
//! proposal, deferred a reply, corrected a value…), the raw material observations are counted
//! from.
//!
//! Key: `Table::Signal/<id:u64 BE>`, where `id = ts_ms << 10 | seq` (`seq` < 1024 tells apart
//! signals of the same millisecond), so keys sort by time and a window is one range scan. Ids
//! stay below 2⁵³ (exact in JavaScript) for times before the year 2248.
//!
//! Byte format (kind [`KIND`]):
//!
//! ```text
//! id:u64 ts:i64 offset_min:i32 kind:str agent:str category:str category_given:u8
//! contact:str entity:str tool:str stage:str error_class:str
//! attrs: n:u32 (key:str tag:u8 (0 str:str | 1 num:f64))×n
//! detail:str correction:u8 (1 from:str to:str) source:str trust:f32 episode:opt_i64
//! features:u8 (1 features) texts:u8 (1 before:str after:str)
//! reporter:u8 (0 the host, 1 an agent through MCP; absent in older signals: the host)
//! features := symbols_before:u16×6 symbols_after:u16×6 parts:u8×3 (bit0 before, bit1 after,
//!             bit2 changed) removed:strs added:strs length_ratio:f32 distance:f32
//!             lang_before:str lang_after:str draft_words: n:u32 u32×n
//! ```

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::record::edit::{EditFeatures, PartChange};
use crate::record::outcome::Reporter;
use crate::store::codec::{open, seal, Reader, Writer};

/// Record kind of a signal envelope.
pub const KIND: u8 = 8;

/// What the user did.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum SignalKind {
    /// Changed a draft before sending it (`before`/`after` say how).
    Edited,
    /// Refused what the agent proposed.
    Rejected,
    /// Accepted it as it was.
    Approved,
    /// Replaced a value the agent used (`correction` says which).
    Corrected,
    /// The agent failed (`error_class` says how).
    Exception,
    /// Put the task off.
    Deferred,
    /// Written by the engine when the user marks an observation wrong: the pattern in
    /// `detail` must never be proposed again. Not accepted from callers.
    Reverse,
    /// The caller's own kind, written `custom:NAME`.
    Custom(String),
}

impl SignalKind {
    /// Its name as written in JSON.
    pub fn name(&self) -> String {
        match self {
            SignalKind::Edited => "edited".into(),
            SignalKind::Rejected => "rejected".into(),
            SignalKind::Approved => "approved".into(),
            SignalKind::Corrected => "corrected".into(),
            SignalKind::Exception => "exception".into(),
            SignalKind::Deferred => "deferred".into(),
            SignalKind::Reverse => "reverse".into(),
            SignalKind::Custom(n) => format!("custom:{n}"),
        }
    }

    /// Parses a caller's kind (`reverse` is the engine's own and refused).
    pub fn parse(s: &str) -> Result<SignalKind> {
        Self::parse_stored(s).and_then(|k| match k {
            SignalKind::Reverse => Err(bad_kind(s)),
            k => Ok(k),
        })
    }

    fn parse_stored(s: &str) -> Result<SignalKind> {
        Ok(match s {
            "edited" => SignalKind::Edited,
            "rejected" => SignalKind::Rejected,
            "approved" => SignalKind::Approved,
            "corrected" => SignalKind::Corrected,
            "exception" => SignalKind::Exception,
            "deferred" => SignalKind::Deferred,
            "reverse" => SignalKind::Reverse,
            _ => match s.strip_prefix("custom:") {
                Some(n)
                    if !n.is_empty()
                        && n.len() <= 40
                        && n.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) =>
                {
                    SignalKind::Custom(n.to_string())
                }
                _ => return Err(bad_kind(s)),
            },
        })
    }

    /// The category a signal of this kind belongs to when the caller gives none.
    pub fn default_category(&self) -> Category {
        match self {
            SignalKind::Edited | SignalKind::Corrected => Category::WritingStyle,
            SignalKind::Deferred => Category::Rhythm,
            SignalKind::Exception => Category::Tools,
            _ => Category::Decisions,
        }
    }
}

fn bad_kind(s: &str) -> Error {
    Error::InvalidInput(format!(
        "signal kind {s:?} is not one of edited, rejected, approved, corrected, exception, \
         deferred: write your own kinds as custom:NAME (letters, digits, '-', '_', '.')"
    ))
}

/// What an observation is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// How the user writes.
    WritingStyle,
    /// When the user works.
    Rhythm,
    /// Who the user deals with, and how.
    People,
    /// Which tools fail, and how.
    Tools,
    /// What the user accepts or refuses.
    Decisions,
}

impl Category {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Category::WritingStyle => "writing-style",
            Category::Rhythm => "rhythm",
            Category::People => "people",
            Category::Tools => "tools",
            Category::Decisions => "decisions",
        }
    }
}

impl std::str::FromStr for Category {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "writing-style" => Category::WritingStyle,
            "rhythm" => Category::Rhythm,
            "people" => Category::People,
            "tools" => Category::Tools,
            "decisions" => Category::Decisions,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "category {s:?} is not one of writing-style, rhythm, people, tools, decisions"
                )))
            }
        })
    }
}

/// A free situation attribute's value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Attr {
    /// Compared by equality (case-insensitive).
    Str(String),
    /// Compared by thresholds.
    Num(f64),
}

/// Where a signal happened.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct SignalSituation {
    /// The person the work was for ("Marco Bertelli").
    pub contact: String,
    /// What was worked on (`email`, `quote`, `invoice`…).
    pub entity: String,
    /// The tool in use.
    pub tool: String,
    /// The workflow stage.
    pub stage: String,
    /// The error class, for exceptions.
    pub error_class: String,
    /// Any other attributes (`segment=technical`, `amount=12500`).
    pub attrs: BTreeMap<String, Attr>,
}

impl SignalSituation {
    /// A string attribute by key (the named fields first, then free attributes).
    pub fn text(&self, key: &str) -> Option<&str> {
        let named = match key {
            "contact" => Some(&self.contact),
            "entity" => Some(&self.entity),
            "tool" => Some(&self.tool),
            "stage" => Some(&self.stage),
            "error_class" => Some(&self.error_class),
            _ => None,
        };
        match named {
            Some(s) => (!s.is_empty()).then_some(s.as_str()),
            None => match self.attrs.get(key) {
                Some(Attr::Str(s)) => Some(s.as_str()),
                _ => None,
            },
        }
    }

    /// A numeric free attribute by key.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self.attrs.get(key) {
            Some(Attr::Num(n)) => Some(*n),
            _ => None,
        }
    }

    /// Every string-valued key and value, named fields first.
    pub fn texts(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = [
            ("contact", &self.contact),
            ("entity", &self.entity),
            ("tool", &self.tool),
            ("stage", &self.stage),
            ("error_class", &self.error_class),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k, v.as_str()))
        .collect();
        for (k, v) in &self.attrs {
            if let Attr::Str(s) = v {
                out.push((k.as_str(), s.as_str()));
            }
        }
        out
    }

    /// Every numeric key and value.
    pub fn numbers(&self) -> impl Iterator<Item = (&str, f64)> {
        self.attrs.iter().filter_map(|(k, v)| match v {
            Attr::Num(n) => Some((k.as_str(), *n)),
            Attr::Str(_) => None,
        })
    }
}

/// One behaviour signal.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Signal {
    /// Engine-assigned id (`ts << 10 | seq`).
    pub id: u64,
    /// When it happened (ms since the Unix epoch, UTC).
    pub ts: i64,
    /// The user's UTC offset then, in minutes (from the timestamp's zone).
    pub offset_min: i32,
    /// What the user did.
    pub kind: SignalKind,
    /// The agent whose work it was.
    pub agent: String,
    /// What it is about.
    pub category: Category,
    /// The caller gave the category (otherwise it was inferred from the kind).
    pub category_given: bool,
    /// Where it happened.
    pub situation: SignalSituation,
    /// A short note (≤ 280 characters); for reverse signals, the pattern key.
    pub detail: String,
    /// `from → to` of a correction.
    pub correction: Option<(String, String)>,
    /// Who reported it (`user`, `agent`, `tool:…`).
    pub source: String,
    /// Trust in that source, 0–1.
    pub trust: f32,
    /// The episode it is about, if any.
    pub episode: Option<u64>,
    /// Edit features, when a draft and what was sent were given.
    pub features: Option<EditFeatures>,
    /// The draft and what was sent, only when the engine is set to keep them.
    pub texts: Option<(String, String)>,
    /// The channel it came through: the host's API (Rust, JS, WIT, the CLI), reporting what
    /// the user did, or an agent through MCP. An agent's signals may make observations, but
    /// a rule comes of them only when the user confirms it (`learning::promotion`).
    pub reporter: Reporter,
}

impl Signal {
    /// Local time of day in minutes (0–1439) and weekday (0 = Monday) for the user.
    pub fn local_time(&self) -> (u16, u8) {
        let local = self.ts + i64::from(self.offset_min) * 60_000;
        let day = local.div_euclid(crate::time::DAY);
        let minute = (local.rem_euclid(crate::time::DAY) / 60_000) as u16;
        // 1970-01-01 was a Thursday (3 with Monday = 0).
        let weekday = (day + 3).rem_euclid(7) as u8;
        (minute, weekday)
    }

    /// Sealed envelope.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.u64(self.id).i64(self.ts).u32(self.offset_min as u32).str(&self.kind.name());
        w.str(&self.agent).str(self.category.name()).u8(u8::from(self.category_given));
        let s = &self.situation;
        w.str(&s.contact).str(&s.entity).str(&s.tool).str(&s.stage).str(&s.error_class);
        w.u32(s.attrs.len() as u32);
        for (k, v) in &s.attrs {
            w.str(k);
            match v {
                Attr::Str(x) => w.u8(0).str(x),
                Attr::Num(x) => w.u8(1).f64(*x),
            };
        }
        w.str(&self.detail);
        match &self.correction {
            Some((from, to)) => w.u8(1).str(from).str(to),
            None => w.u8(0),
        };
        w.str(&self.source).f32(self.trust).opt_i64(self.episode.map(|e| e as i64));
        match &self.features {
            Some(f) => {
                w.u8(1);
                encode_features(&mut w, f);
            }
            None => {
                w.u8(0);
            }
        }
        match &self.texts {
            Some((b, a)) => w.u8(1).str(b).str(a),
            None => w.u8(0),
        };
        w.u8(self.reporter as u8);
        seal(KIND, &w.finish())
    }

    /// Decodes [`Signal::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let what = "signal";
        let mut r = Reader::new(open(bytes, KIND, what)?, what);
        let id = r.u64()?;
        let ts = r.i64()?;
        let offset_min = r.u32()? as i32;
        let kind =
            SignalKind::parse_stored(r.str()?).map_err(|e| r.corrupt(format!("kind: {e}")))?;
        let agent = r.str()?.to_string();
        let category = r.str()?.parse().map_err(|e| r.corrupt(format!("{e}")))?;
        let category_given = r.u8()? == 1;
        let mut situation = SignalSituation {
            contact: r.str()?.into(),
            entity: r.str()?.into(),
            tool: r.str()?.into(),
            stage: r.str()?.into(),
            error_class: r.str()?.into(),
            attrs: BTreeMap::new(),
        };
        for _ in 0..r.u32()? {
            let k = r.str()?.to_string();
            let v = match r.u8()? {
                0 => Attr::Str(r.str()?.into()),
                1 => Attr::Num(r.f64()?),
                t => return Err(r.corrupt(format!("attribute tag {t}"))),
            };
            situation.attrs.insert(k, v);
        }
        let detail = r.str()?.to_string();
        let correction = match r.u8()? {
            1 => Some((r.str()?.to_string(), r.str()?.to_string())),
            _ => None,
        };
        let source = r.str()?.to_string();
        let trust = r.f32()?;
        let episode = r.opt_i64()?.map(|e| e as u64);
        let features = match r.u8()? {
            1 => Some(decode_features(&mut r)?),
            _ => None,
        };
        let texts = match r.u8()? {
            1 => Some((r.str()?.to_string(), r.str()?.to_string())),
            _ => None,
        };
        // Absent in signals written before the byte existed: the host's, as they all were.
        let reporter = match if r.remaining() == 0 { 0 } else { r.u8()? } {
            0 => Reporter::Host,
            1 => Reporter::Agent,
            b => return Err(r.corrupt(format!("reporter {b}"))),
        };
        r.end()?;
        Ok(Signal {
            id,
            ts,
            offset_min,
            kind,
            agent,
            category,
            category_given,
            situation,
            detail,
            correction,
            source,
            trust,
            episode,
            features,
            texts,
            reporter,
        })
    }
}

fn encode_features(w: &mut Writer, f: &EditFeatures) {
    for x in f.symbols_before.iter().chain(&f.symbols_after) {
        w.u8(*x as u8).u8((*x >> 8) as u8);
    }
    for p in &f.parts {
        w.u8(u8::from(p.before) | u8::from(p.after) << 1 | u8::from(p.changed) << 2);
    }
    w.strs(&f.removed).strs(&f.added).f32(f.length_ratio).f32(f.distance);
    w.str(&f.lang_before).str(&f.lang_after).u32(f.draft_words.len() as u32);
    for h in &f.draft_words {
        w.u32(*h);
    }
}

fn decode_features(r: &mut Reader) -> Result<EditFeatures> {
    let mut f = EditFeatures::default();
    for i in 0..12 {
        let v = u16::from(r.u8()?) | u16::from(r.u8()?) << 8;
        if i < 6 {
            f.symbols_before[i] = v;
        } else {
            f.symbols_after[i - 6] = v;
        }
    }
    for p in f.parts.iter_mut() {
        let b = r.u8()?;
        *p = PartChange { before: b & 1 != 0, after: b & 2 != 0, changed: b & 4 != 0 };
    }
    f.removed = r.strs()?;
    f.added = r.strs()?;
    f.length_ratio = r.f32()?;
    f.distance = r.f32()?;
    f.lang_before = r.str()?.to_string();
    f.lang_after = r.str()?.to_string();
    let n = r.u32()? as usize;
    if n > r.remaining() / 4 {
        return Err(r.corrupt(format!("{n} draft word hashes claimed")));
    }
    f.draft_words = (0..n).map(|_| r.u32()).collect::<Result<_>>()?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_round_trip_and_know_local_time() {
        let mut attrs = BTreeMap::new();
        attrs.insert("segment".to_string(), Attr::Str("technical".into()));
        attrs.insert("amount".to_string(), Attr::Num(12_500.0));
        let s = Signal {
            id: 5,
            // 2024-03-01T15:04:00+01:00 (a Friday)
            ts: crate::time::parse_iso8601("2024-03-01T15:04:00+01:00").unwrap(),
            offset_min: 60,
            kind: SignalKind::Custom("escalated".into()),
            agent: "email".into(),
            category: Category::People,
            category_given: true,
            situation: SignalSituation { contact: "Marco".into(), attrs, ..Default::default() },
            detail: "x".into(),
            correction: Some(("colour".into(), "color".into())),
            source: "user".into(),
            trust: 1.0,
            episode: Some(3),
            features: Some(EditFeatures::of("Hi; there!", "Hi, there")),
            texts: Some(("a".into(), "b".into())),
            reporter: Reporter::Agent,
        };
        assert_eq!(Signal::decode(&s.encode()).unwrap(), s);
        // A signal written before the reporter byte existed reads as the host's.
        let host = Signal { reporter: Reporter::Host, ..s.clone() };
        let new = host.encode();
        let body = open(&new, KIND, "signal").unwrap();
        let old = seal(KIND, &body[..body.len() - 1]);
        assert_eq!(Signal::decode(&old).unwrap(), host);
        assert_eq!(s.local_time(), (15 * 60 + 4, 4));
    }

    #[test]
    fn kinds_are_checked() {
        assert_eq!(SignalKind::parse("edited").unwrap(), SignalKind::Edited);
        assert_eq!(SignalKind::parse("custom:x-1").unwrap(), SignalKind::Custom("x-1".into()));
        for bad in ["clicked", "reverse", "custom:", "custom:a b", "EDITED"] {
            assert_eq!(SignalKind::parse(bad).unwrap_err().code(), "INVALID_INPUT", "{bad}");
        }
    }
}
