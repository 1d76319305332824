//! Patterns: a behaviour of the user under a condition on the situation, for one agent.
//!
//! The machine-readable key (stored with every observation and rule) is
//! `agent|behaviour|condition`:
//!
//! ```text
//! behaviour := removed:SYMBOL | added:SYMBOL            (semicolon, exclamation, question,
//!                                                        emoji, dash, ellipsis)
//!            | greeting:CHANGE | pleasantry:CHANGE | signoff:CHANGE   (removed, added, replaced)
//!            | phrase-removed:WORDS | phrase-added:WORDS
//!            | rewrite | shortened | lengthened | language:LANG
//!            | deferred | rejected | custom:NAME | exception:CLASS | corrected:FROM>TO
//! condition := ""                                       (always)
//!            | KEY=VALUE                                (a situation string, case-insensitive)
//!            | KEY>=NUMBER | KEY<=NUMBER                (a numeric attribute)
//!            | weekday=DAY | weekday=DAY&time>=HH:MM | weekday=DAY&time<HH:MM
//!            | time>=HH:MM | time<HH:MM                 (the user's local time)
//! ```
//!
//! For each signal a behaviour is *possible* (the situation gave the user the chance: a draft
//! without a semicolon cannot have one removed), *happened*, or *contradicted* (the user did
//! the opposite: added what the pattern says they remove). Counting those over the signals
//! where the condition holds gives an observation's occurrences, opportunities and
//! contradictions (`learn::detect`).

use crate::learn::features::{EditFeatures, Part, Symbol};
use crate::record::signal::{Signal, SignalKind};

/// Length below which an edited text counts as shortened (sent / draft characters).
pub const SHORTENED: f32 = 0.67;
/// Length above which it counts as lengthened.
pub const LENGTHENED: f32 = 1.5;

/// How a [`Part`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Change {
    /// The draft had it, the sent text does not.
    Removed,
    /// The sent text has it, the draft did not.
    Added,
    /// Both have it, with other words.
    Replaced,
}

impl Change {
    fn name(self) -> &'static str {
        match self {
            Change::Removed => "removed",
            Change::Added => "added",
            Change::Replaced => "replaced",
        }
    }
}

/// What the user does.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Behaviour {
    /// Removes a symbol class from drafts.
    SymbolRemoved(Symbol),
    /// Adds one.
    SymbolAdded(Symbol),
    /// Removes, adds or replaces a greeting, pleasantry or sign-off.
    Part(Part, Change),
    /// Removes a phrase (folded words).
    PhraseRemoved(String),
    /// Adds one.
    PhraseAdded(String),
    /// Rewrites the draft entirely.
    Rewrite,
    /// Cuts the draft to under two thirds.
    Shortened,
    /// Makes it half again as long.
    Lengthened,
    /// Sends it in another language (ISO 639-1).
    Language(String),
    /// A signal of this kind (deferred, rejected, custom:NAME).
    Kind(String),
    /// The agent fails with this error class.
    Exception(String),
    /// The user corrects `from` to `to`.
    Corrected(String, String),
}

impl Behaviour {
    /// The behaviour's key (see the module docs).
    pub fn key(&self) -> String {
        match self {
            Behaviour::SymbolRemoved(s) => format!("removed:{}", s.name()),
            Behaviour::SymbolAdded(s) => format!("added:{}", s.name()),
            Behaviour::Part(p, c) => format!("{}:{}", p.name(), c.name()),
            Behaviour::PhraseRemoved(p) => format!("phrase-removed:{p}"),
            Behaviour::PhraseAdded(p) => format!("phrase-added:{p}"),
            Behaviour::Rewrite => "rewrite".into(),
            Behaviour::Shortened => "shortened".into(),
            Behaviour::Lengthened => "lengthened".into(),
            Behaviour::Language(l) => format!("language:{l}"),
            Behaviour::Kind(k) => k.clone(),
            Behaviour::Exception(c) => format!("exception:{c}"),
            Behaviour::Corrected(f, t) => format!("corrected:{f}>{t}"),
        }
    }

    /// Parses [`Behaviour::key`].
    pub fn parse(key: &str) -> Option<Behaviour> {
        let (head, arg) = key.split_once(':').unwrap_or((key, ""));
        let change = |c: &str| match c {
            "removed" => Some(Change::Removed),
            "added" => Some(Change::Added),
            "replaced" => Some(Change::Replaced),
            _ => None,
        };
        Some(match head {
            "removed" => Behaviour::SymbolRemoved(Symbol::from_name(arg)?),
            "added" => Behaviour::SymbolAdded(Symbol::from_name(arg)?),
            "phrase-removed" if !arg.is_empty() => Behaviour::PhraseRemoved(arg.into()),
            "phrase-added" if !arg.is_empty() => Behaviour::PhraseAdded(arg.into()),
            "rewrite" => Behaviour::Rewrite,
            "shortened" => Behaviour::Shortened,
            "lengthened" => Behaviour::Lengthened,
            "language" if !arg.is_empty() => Behaviour::Language(arg.into()),
            "deferred" | "rejected" => Behaviour::Kind(head.into()),
            "custom" if !arg.is_empty() => Behaviour::Kind(key.into()),
            "exception" if !arg.is_empty() => Behaviour::Exception(arg.into()),
            "corrected" => {
                let (f, t) = arg.split_once('>')?;
                Behaviour::Corrected(f.into(), t.into())
            }
            p => Behaviour::Part(Part::from_name(p)?, change(arg)?),
        })
    }

    /// Every behaviour that happened in `s`.
    pub fn of(s: &Signal) -> Vec<Behaviour> {
        let mut out = Vec::new();
        match &s.kind {
            SignalKind::Deferred | SignalKind::Rejected => out.push(Behaviour::Kind(s.kind.name())),
            SignalKind::Custom(_) => out.push(Behaviour::Kind(s.kind.name())),
            SignalKind::Exception if !s.situation.error_class.is_empty() => {
                out.push(Behaviour::Exception(s.situation.error_class.to_lowercase()))
            }
            SignalKind::Corrected => {
                if let Some((f, t)) = &s.correction {
                    out.push(Behaviour::Corrected(f.to_lowercase(), t.to_lowercase()));
                }
            }
            _ => {}
        }
        if let Some(f) = &s.features {
            edits(f, &mut out);
        }
        out
    }

    /// True when `s` gave the user the chance to do this (a rewritten draft is an
    /// opportunity only for a rewrite or a change of language).
    pub fn possible(&self, s: &Signal) -> bool {
        let f = s.features.as_ref();
        if f.is_some_and(EditFeatures::rewrite)
            && !matches!(self, Behaviour::Rewrite | Behaviour::Language(_))
        {
            return false;
        }
        match self {
            Behaviour::SymbolRemoved(x) => f.is_some_and(|f| f.symbol_before(*x) > 0),
            Behaviour::SymbolAdded(_)
            | Behaviour::Rewrite
            | Behaviour::Shortened
            | Behaviour::Lengthened => f.is_some(),
            Behaviour::Part(p, Change::Added) => f.is_some_and(|f| !f.part(*p).before),
            Behaviour::Part(p, _) => f.is_some_and(|f| f.part(*p).before),
            Behaviour::PhraseRemoved(p) => f.is_some_and(|f| f.draft_had(p)),
            Behaviour::PhraseAdded(p) => f.is_some_and(|f| !f.draft_had(p)),
            Behaviour::Language(l) => {
                f.is_some_and(|f| !f.lang_before.is_empty() && f.lang_before != *l)
            }
            Behaviour::Kind(_) => !matches!(s.kind, SignalKind::Exception | SignalKind::Reverse),
            Behaviour::Exception(_) => s.kind != SignalKind::Reverse,
            Behaviour::Corrected(from, _) => {
                s.correction.as_ref().is_some_and(|(f, _)| f.eq_ignore_ascii_case(from))
            }
        }
    }

    /// True when the user did the opposite in `s`.
    pub fn contradicted(&self, s: &Signal) -> bool {
        let f = s.features.as_ref();
        match self {
            Behaviour::SymbolRemoved(x) => {
                f.is_some_and(|f| f.symbol_after(*x) > f.symbol_before(*x))
            }
            Behaviour::SymbolAdded(x) => {
                f.is_some_and(|f| f.symbol_after(*x) < f.symbol_before(*x))
            }
            Behaviour::Part(p, Change::Removed) => f.is_some_and(|f| {
                let c = f.part(*p);
                !c.before && c.after
            }),
            Behaviour::Part(p, Change::Added) => f.is_some_and(|f| {
                let c = f.part(*p);
                c.before && !c.after
            }),
            Behaviour::PhraseRemoved(p) => f.is_some_and(|f| f.added.contains(p)),
            Behaviour::PhraseAdded(p) => f.is_some_and(|f| f.removed.contains(p)),
            Behaviour::Shortened => f.is_some_and(|f| !f.rewrite() && f.length_ratio > LENGTHENED),
            Behaviour::Lengthened => f.is_some_and(|f| !f.rewrite() && f.length_ratio < SHORTENED),
            Behaviour::Kind(k) if k == "rejected" => s.kind == SignalKind::Approved,
            Behaviour::Corrected(from, to) => s
                .correction
                .as_ref()
                .is_some_and(|(f, t)| f.eq_ignore_ascii_case(to) && t.eq_ignore_ascii_case(from)),
            _ => false,
        }
    }

    /// The behaviour a user who does the opposite shows (for contradicting rules).
    pub fn opposite(&self) -> Option<Behaviour> {
        Some(match self {
            Behaviour::SymbolRemoved(x) => Behaviour::SymbolAdded(*x),
            Behaviour::SymbolAdded(x) => Behaviour::SymbolRemoved(*x),
            Behaviour::Part(p, Change::Removed) => Behaviour::Part(*p, Change::Added),
            Behaviour::Part(p, Change::Added) => Behaviour::Part(*p, Change::Removed),
            Behaviour::PhraseRemoved(p) => Behaviour::PhraseAdded(p.clone()),
            Behaviour::PhraseAdded(p) => Behaviour::PhraseRemoved(p.clone()),
            Behaviour::Shortened => Behaviour::Lengthened,
            Behaviour::Lengthened => Behaviour::Shortened,
            Behaviour::Corrected(f, t) => Behaviour::Corrected(t.clone(), f.clone()),
            _ => return None,
        })
    }

    /// True when the pattern implies a clear action an agent can follow (an
    /// observation's `promotion_candidate`): exceptions, replaced parts and custom kinds describe what
    /// happens, not what to do.
    pub fn actionable(&self) -> bool {
        !matches!(self, Behaviour::Exception(_) | Behaviour::Part(_, Change::Replaced))
            && !matches!(self, Behaviour::Kind(k) if k.starts_with("custom:"))
    }

    /// The rule an agent should follow, in words (without the condition).
    pub fn directive(&self) -> String {
        match self {
            Behaviour::SymbolRemoved(s) => {
                format!("never use {} — the user removes them", s.plural())
            }
            Behaviour::SymbolAdded(s) => format!("use {} — the user adds them", s.plural()),
            Behaviour::Part(p, c) => {
                // (with an article, bare, and the pronoun that refers back to it)
                let (what, bare, them) = match p {
                    Part::Greeting => ("an opening greeting", "opening greeting", "it"),
                    Part::Pleasantry => ("opening pleasantries", "opening pleasantries", "them"),
                    Part::Signoff => ("a sign-off", "sign-off", "it"),
                };
                match c {
                    Change::Removed => format!("no {bare} — the user removes {them}"),
                    Change::Added => format!("add {what} — the user adds {them}"),
                    Change::Replaced => format!("the user rewrites {what}"),
                }
            }
            Behaviour::PhraseRemoved(p) => format!("don't write \"{p}\" — the user removes it"),
            Behaviour::PhraseAdded(p) => format!("include \"{p}\" — the user adds it"),
            Behaviour::Rewrite => "don't draft — the user rewrites these entirely".into(),
            Behaviour::Shortened => "keep drafts short — the user cuts them down".into(),
            Behaviour::Lengthened => "write fuller drafts — the user expands them".into(),
            Behaviour::Language(l) => {
                format!("write in {} — the user translates drafts", lang_name(l))
            }
            Behaviour::Kind(k) if k == "deferred" => {
                "defer, don't draft a response — the user puts these off".into()
            }
            Behaviour::Kind(k) if k == "rejected" => {
                "don't propose this — the user rejects it".into()
            }
            Behaviour::Kind(k) => format!("the user does {k}"),
            Behaviour::Exception(c) => format!("expect {c} errors"),
            Behaviour::Corrected(f, t) => {
                format!("write \"{t}\", not \"{f}\" — the user corrects it")
            }
        }
    }
}

fn lang_name(code: &str) -> &str {
    match code {
        "en" => "English",
        "it" => "Italian",
        "de" => "German",
        "fr" => "French",
        "es" => "Spanish",
        "pt" => "Portuguese",
        other => other,
    }
}

fn edits(f: &EditFeatures, out: &mut Vec<Behaviour>) {
    // A rewrite says it all: the symbols, parts and phrases of a discarded draft are not
    // separate habits.
    if f.rewrite() {
        out.push(Behaviour::Rewrite);
        if !f.lang_after.is_empty() && !f.lang_before.is_empty() && f.lang_after != f.lang_before {
            out.push(Behaviour::Language(f.lang_after.clone()));
        }
        return;
    }
    for x in Symbol::ALL {
        if f.symbol_after(x) < f.symbol_before(x) {
            out.push(Behaviour::SymbolRemoved(x));
        } else if f.symbol_after(x) > f.symbol_before(x) {
            out.push(Behaviour::SymbolAdded(x));
        }
    }
    for p in Part::ALL {
        let c = f.part(p);
        match (c.before, c.after) {
            (true, false) => out.push(Behaviour::Part(p, Change::Removed)),
            (false, true) => out.push(Behaviour::Part(p, Change::Added)),
            (true, true) if c.changed => out.push(Behaviour::Part(p, Change::Replaced)),
            _ => {}
        }
    }
    out.extend(f.removed.iter().cloned().map(Behaviour::PhraseRemoved));
    out.extend(f.added.iter().cloned().map(Behaviour::PhraseAdded));
    if f.length_ratio < SHORTENED {
        out.push(Behaviour::Shortened);
    } else if f.length_ratio > LENGTHENED {
        out.push(Behaviour::Lengthened);
    }
    if !f.lang_after.is_empty() && !f.lang_before.is_empty() && f.lang_after != f.lang_before {
        out.push(Behaviour::Language(f.lang_after.clone()));
    }
}

/// Weekday names in keys (0 = Monday).
pub const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const WEEKDAY_NAMES: [&str; 7] =
    ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays"];

/// When a pattern applies.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub enum Condition {
    /// Always.
    Always,
    /// A situation string equals a value (case-insensitive).
    Equals(String, String),
    /// A numeric attribute is at least a value.
    AtLeast(String, f64),
    /// A numeric attribute is at most a value.
    AtMost(String, f64),
    /// The user's local weekday (0 = Monday) and, optionally, a time of day from (inclusive)
    /// or before (exclusive), in minutes.
    Weekday(u8, Option<u16>, Option<u16>),
    /// Local time of day from (inclusive) / before (exclusive), any day.
    Time(Option<u16>, Option<u16>),
}

fn hhmm(m: u16) -> String {
    format!("{:02}:{:02}", m / 60, m % 60)
}

fn parse_hhmm(s: &str) -> Option<u16> {
    let (h, m) = s.split_once(':')?;
    let (h, m): (u16, u16) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

/// A number as keys write it: integers without a fraction.
pub fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

impl Condition {
    /// The condition's key (see the module docs).
    pub fn key(&self) -> String {
        let time = |from: &Option<u16>, to: &Option<u16>| match (from, to) {
            (Some(f), _) => format!("time>={}", hhmm(*f)),
            (None, Some(t)) => format!("time<{}", hhmm(*t)),
            (None, None) => String::new(),
        };
        match self {
            Condition::Always => String::new(),
            Condition::Equals(k, v) => format!("{k}={v}"),
            Condition::AtLeast(k, x) => format!("{k}>={}", number(*x)),
            Condition::AtMost(k, x) => format!("{k}<={}", number(*x)),
            Condition::Weekday(d, f, t) => {
                let w = format!("weekday={}", WEEKDAYS[usize::from(*d % 7)]);
                match time(f, t) {
                    s if s.is_empty() => w,
                    s => format!("{w}&{s}"),
                }
            }
            Condition::Time(f, t) => time(f, t),
        }
    }

    /// Parses [`Condition::key`].
    pub fn parse(key: &str) -> Option<Condition> {
        if key.is_empty() {
            return Some(Condition::Always);
        }
        let time = |s: &str| -> Option<(Option<u16>, Option<u16>)> {
            if let Some(t) = s.strip_prefix("time>=") {
                Some((Some(parse_hhmm(t)?), None))
            } else {
                Some((None, Some(parse_hhmm(s.strip_prefix("time<")?)?)))
            }
        };
        if let Some(rest) = key.strip_prefix("weekday=") {
            let (day, t) = rest.split_once('&').map_or((rest, None), |(d, t)| (d, Some(t)));
            let d = WEEKDAYS.iter().position(|w| *w == day)? as u8;
            let (f, to) = match t {
                Some(t) => time(t)?,
                None => (None, None),
            };
            return Some(Condition::Weekday(d, f, to));
        }
        if key.starts_with("time") {
            let (f, t) = time(key)?;
            return Some(Condition::Time(f, t));
        }
        if let Some((k, v)) = key.split_once(">=") {
            return Some(Condition::AtLeast(k.into(), v.parse().ok()?));
        }
        if let Some((k, v)) = key.split_once("<=") {
            return Some(Condition::AtMost(k.into(), v.parse().ok()?));
        }
        let (k, v) = key.split_once('=')?;
        Some(Condition::Equals(k.into(), v.into()))
    }

    /// True when it holds for a situation (the detector keeps a compact copy of each
    /// signal's situation and asks through accessors).
    pub fn holds_on(&self, at: &Situated) -> bool {
        let in_time = |m: u16, f: &Option<u16>, t: &Option<u16>| {
            f.is_none_or(|f| m >= f) && t.is_none_or(|t| m < t)
        };
        match self {
            Condition::Always => true,
            Condition::Equals(k, v) => (at.text)(k).is_some_and(|x| x.eq_ignore_ascii_case(v)),
            Condition::AtLeast(k, x) => (at.number)(k).is_some_and(|n| n >= *x),
            Condition::AtMost(k, x) => (at.number)(k).is_some_and(|n| n <= *x),
            Condition::Weekday(d, f, t) => at.weekday == *d && in_time(at.minute, f, t),
            Condition::Time(f, t) => in_time(at.minute, f, t),
        }
    }

    /// The condition in words, as a rule's prefix ("When segment is technical").
    pub fn phrase(&self) -> Option<String> {
        let time = |f: &Option<u16>, t: &Option<u16>| match (f, t) {
            (Some(f), _) => format!(" from {}", hhmm(*f)),
            (None, Some(t)) => format!(" before {}", hhmm(*t)),
            _ => String::new(),
        };
        Some(match self {
            Condition::Always => return None,
            Condition::Equals(k, v) => format!("When {} is {v}", k.replace('_', " ")),
            Condition::AtLeast(k, x) => format!("When {k} is at least {}", number(*x)),
            Condition::AtMost(k, x) => format!("When {k} is at most {}", number(*x)),
            Condition::Weekday(d, f, t) => {
                format!("On {}{}", WEEKDAY_NAMES[usize::from(*d % 7)], time(f, t))
            }
            Condition::Time(f, t) => format!("Every day{}", time(f, t)),
        })
    }

    /// Conditions of one family are refinements of each other (another threshold on the
    /// same attribute, another time on the same weekday): `""` for always, `k=v`, `k>=`,
    /// `k<=`, `weekday=DAY`, `time`.
    pub fn family(&self) -> String {
        match self {
            Condition::Always => String::new(),
            Condition::Equals(k, v) => format!("{k}={}", v.to_lowercase()),
            Condition::AtLeast(k, _) => format!("{k}>="),
            Condition::AtMost(k, _) => format!("{k}<="),
            Condition::Weekday(d, ..) => format!("weekday={}", WEEKDAYS[usize::from(*d % 7)]),
            Condition::Time(..) => "time".into(),
        }
    }

    /// True when every situation this condition holds on also satisfies `wider`: `self` is
    /// the same condition or a narrower one (`segment=technical` ⇒ always; `words>=200` ⇒
    /// `words>=100`; `weekday=fri&time>=16:00` ⇒ `weekday=fri` ⇒ nothing narrower; a time
    /// window inside another). Keys compare case-insensitively, like [`Condition::holds_on`].
    pub fn implies(&self, wider: &Condition) -> bool {
        let within = |f: &Option<u16>, t: &Option<u16>, wf: &Option<u16>, wt: &Option<u16>| {
            wf.is_none_or(|wf| f.is_some_and(|f| f >= wf))
                && wt.is_none_or(|wt| t.is_some_and(|t| t <= wt))
        };
        match (self, wider) {
            (_, Condition::Always) => true,
            (Condition::Equals(k, v), Condition::Equals(wk, wv)) => {
                k.eq_ignore_ascii_case(wk) && v.eq_ignore_ascii_case(wv)
            }
            (Condition::AtLeast(k, x), Condition::AtLeast(wk, w)) => {
                k.eq_ignore_ascii_case(wk) && x >= w
            }
            (Condition::AtMost(k, x), Condition::AtMost(wk, w)) => {
                k.eq_ignore_ascii_case(wk) && x <= w
            }
            (Condition::Weekday(d, f, t), Condition::Weekday(wd, wf, wt)) => {
                d == wd && within(f, t, wf, wt)
            }
            (Condition::Weekday(_, f, t) | Condition::Time(f, t), Condition::Time(wf, wt)) => {
                within(f, t, wf, wt)
            }
            _ => false,
        }
    }

    /// How many situation fields it constrains (0 for always; a weekday with a time is 2).
    pub fn arity(&self) -> u8 {
        match self {
            Condition::Always => 0,
            Condition::Weekday(_, f, t) if f.is_some() || t.is_some() => 2,
            _ => 1,
        }
    }
}

/// What a condition can ask of a situation.
pub struct Situated<'a> {
    /// A string attribute by key.
    pub text: &'a dyn Fn(&str) -> Option<String>,
    /// A numeric attribute by key.
    pub number: &'a dyn Fn(&str) -> Option<f64>,
    /// Local minute of the day.
    pub minute: u16,
    /// Local weekday, 0 = Monday.
    pub weekday: u8,
}

/// A behaviour under a condition, for one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    /// The agent whose work it is about.
    pub agent: String,
    /// What the user does.
    pub behaviour: Behaviour,
    /// When.
    pub condition: Condition,
}

impl Pattern {
    /// `agent|behaviour|condition`.
    pub fn key(&self) -> String {
        format!("{}|{}|{}", self.agent, self.behaviour.key(), self.condition.key())
    }

    /// Parses [`Pattern::key`].
    pub fn parse(key: &str) -> Option<Pattern> {
        let mut it = key.splitn(3, '|');
        let (agent, b, c) = (it.next()?, it.next()?, it.next()?);
        Some(Pattern {
            agent: agent.into(),
            behaviour: Behaviour::parse(b)?,
            condition: Condition::parse(c)?,
        })
    }

    /// The rule in words, at most 25 words ("When segment is technical: no opening
    /// pleasantries — the user removes them").
    pub fn quote(&self) -> String {
        let d = self.behaviour.directive();
        let text = match self.condition.phrase() {
            Some(c) => format!("{c}: {d}"),
            None => {
                let mut c = d.chars();
                c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or(d)
            }
        };
        cap_words(&text, 25)
    }

    /// `agent|behaviour|family`: patterns that are refinements of one another.
    pub fn family_key(&self) -> String {
        format!("{}|{}|{}", self.agent, self.behaviour.key(), self.condition.family())
    }

    /// True when this pattern says everything `other` says: the same agent and behaviour
    /// under a condition `other`'s implies (equal conditions, written with another case,
    /// cover each other).
    pub fn covers(&self, other: &Pattern) -> bool {
        self.agent == other.agent
            && self.behaviour == other.behaviour
            && other.condition.implies(&self.condition)
    }

    /// True when this pattern says everything `narrower` says and more: it covers it and is
    /// not covered back. A rule "no semicolons" subsumes "when segment is technical: no
    /// semicolons".
    pub fn subsumes(&self, narrower: &Pattern) -> bool {
        self.covers(narrower) && !narrower.covers(self)
    }

    /// The key of the pattern that does the opposite under the same condition.
    pub fn opposite_key(&self) -> Option<String> {
        let b = self.behaviour.opposite()?;
        Some(Pattern { behaviour: b, ..self.clone() }.key())
    }

    /// The pattern as JSON: `{agent, behaviour, condition, key}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "agent": self.agent,
            "behaviour": self.behaviour.key(),
            "condition": self.condition.key(),
            "key": self.key(),
        })
    }
}

/// `text` cut to at most `n` words.
pub fn cap_words(text: &str, n: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() <= n {
        text.to_string()
    } else {
        words[..n].join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        for key in [
            "email|removed:semicolon|",
            "email|pleasantry:removed|segment=technical",
            "email|rewrite|amount>=10000",
            "email|deferred|weekday=fri&time>=14:30",
            "crm|corrected:colour>color|time<09:00",
            "crm|custom:escalated|amount<=12.5",
            "files|exception:timeout|tool=s3",
            "email|phrase-removed:just wanted to|contact=Marco Bertelli",
        ] {
            let p = Pattern::parse(key).unwrap_or_else(|| panic!("{key}"));
            assert_eq!(p.key(), key);
        }
        assert!(Pattern::parse("email|frobbed|").is_none());
        assert!(Pattern::parse("email|deferred|weekday=xyz").is_none());
    }

    #[test]
    fn subsumption_follows_implication() {
        let p = |k: &str| Pattern::parse(k).unwrap_or_else(|| panic!("{k}"));
        let yes = [
            ("email|removed:semicolon|", "email|removed:semicolon|segment=technical"),
            ("email|rewrite|words>=100", "email|rewrite|words>=200"),
            ("crm|custom:escalated|amount<=50", "crm|custom:escalated|amount<=12.5"),
            ("email|deferred|weekday=fri", "email|deferred|weekday=fri&time>=14:30"),
            ("email|deferred|time>=12:00", "email|deferred|weekday=fri&time>=14:30"),
            ("email|deferred|time<18:00", "email|deferred|time<09:00"),
            ("files|exception:timeout|", "files|exception:timeout|tool=s3"),
        ];
        let (a, b) =
            (p("email|removed:dash|segment=Technical"), p("email|removed:dash|SEGMENT=technical"));
        assert!(a.covers(&b) && b.covers(&a) && !a.subsumes(&b) && !b.subsumes(&a));
        for (wide, narrow) in yes {
            assert!(p(wide).subsumes(&p(narrow)), "{wide} should subsume {narrow}");
            assert!(!p(narrow).subsumes(&p(wide)), "{narrow} should not subsume {wide}");
        }
        let no = [
            ("email|removed:semicolon|", "email|removed:semicolon|"),
            ("email|removed:semicolon|", "email|added:semicolon|segment=technical"),
            ("email|removed:semicolon|", "crm|removed:semicolon|segment=technical"),
            ("email|rewrite|words>=100", "email|rewrite|words<=200"),
            ("email|rewrite|words>=100", "email|rewrite|chars>=200"),
            ("email|deferred|weekday=fri", "email|deferred|weekday=thu&time>=14:30"),
            ("email|deferred|time>=12:00", "email|deferred|weekday=fri&time<14:30"),
            ("email|deferred|segment=sales", "email|deferred|segment=support"),
        ];
        for (a, b) in no {
            assert!(!p(a).subsumes(&p(b)), "{a} should not subsume {b}");
        }
    }

    #[test]
    fn quotes_read_like_rules() {
        let p = Pattern::parse("email|removed:semicolon|").unwrap();
        assert_eq!(p.quote(), "Never use semicolons — the user removes them");
        let p = Pattern::parse("email|deferred|weekday=fri&time>=14:30").unwrap();
        assert_eq!(
            p.quote(),
            "On Fridays from 14:30: defer, don't draft a response — the user puts these off"
        );
        let p = Pattern::parse("email|rewrite|amount>=10000").unwrap();
        assert_eq!(
            p.quote(),
            "When amount is at least 10000: don't draft — the user rewrites these entirely"
        );
        assert!(p.quote().split_whitespace().count() <= 25);
    }
}
