//! The pattern detector: finds genuine repeated behaviour in a window of signals, with no
//! LLM. Two passes over the signals, each resumable between pages (the state serialises, so
//! a host with a CPU limit can run it over several calls):
//!
//! 1. **Behaviours.** Count what happened in each signal, per agent ([`Behaviour::of`]).
//!    Behaviours with fewer than [`MIN_OCCURRENCES`] occurrences are dropped: one event, or
//!    two, is never generalised from.
//! 2. **Conditions.** For every remaining behaviour, over the signals of its agent, count where
//!    it was possible, where it happened and where it was contradicted, aggregated by every
//!    situation value (strings, numbers, local weekday and time of day).
//!
//! [`Detector::finish`] then enumerates conditions — always; each string value; each numeric
//! threshold `≥ v` / `≤ v` at a value where the behaviour happened; each weekday, alone or
//! from / before a time of day; a time of day alone — and for each computes occurrences,
//! opportunities, consistency = occurrences / opportunities and contradictions. A candidate
//! must have ≥ 3 occurrences, a confidence band ([`Confidence::of`]), and, unless its
//! condition is "always", a significant contrast with the rest of the agent's opportunities
//! ([`fisher_greater`] below [`CONTRAST_P`] divided by the number of conditions tested for
//! the behaviour — Bonferroni's correction, since each condition tried is a chance of a
//! contrast by luck); a value nested in a broader one (a contact within a segment) must also
//! beat the rest of the broader group. Per behaviour the best candidate wins: the higher
//! band, then the more general condition, then more occurrences, then higher consistency.
//! Thresholds are reported at the roundest value that selects the same signals (the gap
//! between 9,800 and 10,450 reads as 10,000; 14:37 after 14:10 reads as 14:30).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::confidence::{fisher_greater, Confidence, CONTRAST_P};
use super::pattern::{Behaviour, Condition, Pattern, Situated};
use crate::record::signal::{Category, Signal, SignalKind};
use crate::time::format_date;

/// Fewest distinct events a pattern needs.
pub const MIN_OCCURRENCES: u32 = 3;
/// Most support ids kept per observation.
pub const MAX_SUPPORT: usize = 200;
/// Most thresholds tried per numeric attribute and per time condition.
const MAX_THRESHOLDS: usize = 48;

/// Occurrences, opportunities and contradictions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Events where the behaviour happened.
    pub occurrences: u32,
    /// Events where it was possible.
    pub opportunities: u32,
    /// Events where the opposite happened.
    pub contradictions: u32,
}

impl Counts {
    fn add(&mut self, flags: u8) {
        self.opportunities += u32::from(flags & POSSIBLE != 0);
        self.occurrences += u32::from(flags & HAPPENED != 0);
        self.contradictions += u32::from(flags & CONTRA != 0);
    }
}

const POSSIBLE: u8 = 1;
const HAPPENED: u8 = 2;
const CONTRA: u8 = 4;

/// A row for one signal where the behaviour was possible or contradicted.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Row {
    id: u64,
    ts: i64,
    flags: u8,
    minute: u16,
    weekday: u8,
    category: u8,
    texts: Vec<(String, String)>,
    numbers: Vec<(String, f64)>,
}

impl Row {
    fn holds(&self, c: &Condition) -> bool {
        let text = |k: &str| self.texts.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone());
        let number = |k: &str| self.numbers.iter().find(|(x, _)| x == k).map(|(_, v)| *v);
        c.holds_on(&Situated {
            text: &text,
            number: &number,
            minute: self.minute,
            weekday: self.weekday,
        })
    }
}

/// A behaviour of one agent under test in pass 2.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Group {
    agent: String,
    #[serde(with = "behaviour_key")]
    behaviour: Behaviour,
    rows: Vec<Row>,
}

/// A behaviour serialises as its key (`learn::pattern`).
mod behaviour_key {
    use super::Behaviour;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &Behaviour, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&b.key())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Behaviour, D::Error> {
        let key = String::deserialize(d)?;
        Behaviour::parse(&key).ok_or_else(|| D::Error::custom(format!("behaviour {key:?}")))
    }
}

/// A pattern the detector found, with its numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The pattern.
    pub pattern: Pattern,
    /// Its counts where the condition holds.
    pub counts: Counts,
    /// occurrences / opportunities.
    pub consistency: f32,
    /// Its band.
    pub confidence: Confidence,
    /// The most common category among its supporting signals.
    pub category: Category,
    /// Ids of the signals where it happened (at most [`MAX_SUPPORT`], newest kept).
    pub support: Vec<u64>,
    /// First occurrence (ms).
    pub first_seen: i64,
    /// Last occurrence (ms).
    pub last_seen: i64,
}

impl Found {
    /// Evidence in words, at most 40 words: "removed in 9 of 10 drafts since 2024-03-03".
    pub fn evidence(&self) -> String {
        let (verb, noun) = match &self.pattern.behaviour {
            Behaviour::SymbolRemoved(_) | Behaviour::PhraseRemoved(_) => ("removed", "drafts"),
            Behaviour::SymbolAdded(_) | Behaviour::PhraseAdded(_) => ("added", "drafts"),
            Behaviour::Part(_, c) => match c {
                super::pattern::Change::Removed => ("removed", "drafts"),
                super::pattern::Change::Added => ("added", "drafts"),
                super::pattern::Change::Replaced => ("replaced", "drafts"),
            },
            Behaviour::Rewrite => ("rewritten entirely", "drafts"),
            Behaviour::Shortened => ("cut down", "drafts"),
            Behaviour::Lengthened => ("expanded", "drafts"),
            Behaviour::Language(_) => ("translated", "drafts"),
            Behaviour::Kind(k) if k == "deferred" => ("deferred", "tasks"),
            Behaviour::Kind(k) if k == "rejected" => ("rejected", "proposals"),
            Behaviour::Kind(_) => ("happened", "events"),
            Behaviour::Exception(_) => ("failed", "runs"),
            Behaviour::Corrected(..) => ("corrected", "uses"),
        };
        let c = &self.counts;
        let mut s = format!(
            "{verb} in {} of {} {noun} since {}",
            c.occurrences,
            c.opportunities,
            format_date(self.first_seen)
        );
        if c.contradictions > 0 {
            s.push_str(&format!("; the opposite {} times", c.contradictions));
        }
        super::pattern::cap_words(&s, 40)
    }
}

/// The two-pass detector's state (serialisable between pages).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Detector {
    /// 1 while counting behaviours, 2 while counting conditions.
    pass: u8,
    /// Pass 1: occurrences per `agent|behaviour`.
    seen: BTreeMap<String, u32>,
    /// Pass 2: the behaviours under test, by `agent|behaviour`.
    groups: BTreeMap<String, Group>,
    /// Agents with a group, to skip others fast.
    agents: BTreeSet<String>,
}

fn category_code(c: Category) -> u8 {
    c as u8
}

fn category_of(code: u8) -> Category {
    match code {
        0 => Category::WritingStyle,
        1 => Category::Rhythm,
        2 => Category::People,
        3 => Category::Tools,
        _ => Category::Decisions,
    }
}

impl Detector {
    /// A detector at the start of pass 1.
    pub fn new() -> Self {
        Detector { pass: 1, ..Detector::default() }
    }

    /// Which pass it is in (1 or 2).
    pub fn pass(&self) -> u8 {
        self.pass
    }

    /// Feeds one signal to the current pass (reverse signals are ignored here; the engine
    /// reads them as blocks).
    pub fn feed(&mut self, s: &Signal) {
        if s.kind == SignalKind::Reverse {
            return;
        }
        if self.pass <= 1 {
            for b in Behaviour::of(s) {
                *self.seen.entry(format!("{}|{}", s.agent, b.key())).or_default() += 1;
            }
            return;
        }
        if !self.agents.contains(&s.agent) {
            return;
        }
        let happened = Behaviour::of(s);
        let (minute, weekday) = s.local_time();
        let prefix = format!("{}|", s.agent);
        for (key, g) in self.groups.range_mut(prefix.clone()..) {
            if !key.starts_with(&prefix) {
                break;
            }
            let mut flags = 0;
            if g.behaviour.possible(s) {
                flags |= POSSIBLE;
                if happened.contains(&g.behaviour) {
                    flags |= HAPPENED;
                }
            }
            if g.behaviour.contradicted(s) {
                flags |= CONTRA;
            }
            if flags == 0 {
                continue;
            }
            g.rows.push(Row {
                id: s.id,
                ts: s.ts,
                flags,
                minute,
                weekday,
                category: category_code(s.category),
                texts: s
                    .situation
                    .texts()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                numbers: s.situation.numbers().map(|(k, v)| (k.to_string(), v)).collect(),
            });
        }
    }

    /// Ends pass 1: keeps the behaviours seen at least [`MIN_OCCURRENCES`] times.
    pub fn start_pass2(&mut self) {
        for (key, n) in std::mem::take(&mut self.seen) {
            if n < MIN_OCCURRENCES {
                continue;
            }
            let Some((agent, Some(behaviour))) =
                key.split_once('|').map(|(a, b)| (a, Behaviour::parse(b)))
            else {
                continue;
            };
            self.agents.insert(agent.to_string());
            self.groups
                .insert(key.clone(), Group { agent: agent.into(), behaviour, rows: Vec::new() });
        }
        self.pass = 2;
    }

    /// Ends pass 2: the best pattern per behaviour, strongest first, skipping `blocked`
    /// pattern keys (rejected by the user).
    pub fn finish(&self, blocked: &BTreeSet<String>) -> Vec<Found> {
        let mut out: Vec<Found> = Vec::new();
        for g in self.groups.values() {
            let behaviour = &g.behaviour;
            let mut total = Counts::default();
            for r in &g.rows {
                total.add(r.flags);
            }
            let mut best: Option<(Found, (u8, u8, u32, u64))> = None;
            let conds = conditions(&g.rows);
            let sets: Vec<Option<Vec<u64>>> = conds
                .iter()
                .map(|c| matches!(c, Condition::Equals(..)).then(|| bitset(&g.rows, c)))
                .collect();
            // Bonferroni: every condition tested is a chance to find a contrast by luck.
            let alpha = CONTRAST_P / conds.len().max(1) as f64;
            for (ci, condition) in conds.into_iter().enumerate() {
                if let Some(set) = &sets[ci] {
                    if !beats_supersets(&g.rows, set, &sets, alpha) {
                        continue;
                    }
                }
                let pattern =
                    Pattern { agent: g.agent.clone(), behaviour: behaviour.clone(), condition };
                if blocked.contains(&pattern.key()) {
                    continue;
                }
                let Some(found) = evaluate(pattern, &g.rows, total, alpha) else { continue };
                let c = &found.counts;
                // Higher band, then more general, then more occurrences, then consistency.
                let rank = (
                    found.confidence as u8,
                    u8::MAX - found.pattern.condition.arity(),
                    c.occurrences,
                    (f64::from(c.occurrences) / f64::from(c.opportunities) * 1e9) as u64,
                );
                if best.as_ref().is_none_or(|(_, r)| rank > *r) {
                    best = Some((found, rank));
                }
            }
            out.extend(best.map(|(f, _)| f));
        }
        out.sort_by(|a, b| {
            b.confidence
                .cmp(&a.confidence)
                .then(b.counts.occurrences.cmp(&a.counts.occurrences))
                .then(b.consistency.total_cmp(&a.consistency))
                .then(a.pattern.key().cmp(&b.pattern.key()))
        });
        out
    }
}

/// Which rows a condition holds for, one bit each.
fn bitset(rows: &[Row], c: &Condition) -> Vec<u64> {
    let mut bits = vec![0u64; rows.len().div_ceil(64)];
    for (i, r) in rows.iter().enumerate() {
        if r.holds(c) {
            bits[i / 64] |= 1 << (i % 64);
        }
    }
    bits
}

/// A value nested in a broader one (a contact inside a segment) must also beat the rest of
/// that broader group: otherwise one supplier who drops the sign-off 5 times of 6 stands for a
/// supplier-wide habit that holds 60 % of the time.
fn beats_supersets(rows: &[Row], set: &[u64], all: &[Option<Vec<u64>>], alpha: f64) -> bool {
    let ones = |s: &[u64]| s.iter().map(|w| w.count_ones()).sum::<u32>();
    let size = ones(set);
    for other in all.iter().flatten() {
        let inside_both = set.iter().zip(other).map(|(a, b)| (a & b).count_ones()).sum::<u32>();
        if inside_both != size || ones(other) <= size {
            continue; // not a strict superset
        }
        let mut inner = Counts::default();
        let mut rest = Counts::default();
        for (i, r) in rows.iter().enumerate() {
            let bit = 1u64 << (i % 64);
            if set[i / 64] & bit != 0 {
                inner.add(r.flags);
            } else if other[i / 64] & bit != 0 {
                rest.add(r.flags);
            }
        }
        let p = fisher_greater(
            inner.occurrences,
            inner.opportunities - inner.occurrences,
            rest.occurrences,
            rest.opportunities - rest.occurrences,
        );
        if p >= alpha {
            return false;
        }
    }
    true
}

impl Detector {
    /// The current counts and band of `pattern` (an existing observation's) over this
    /// window, with no contrast asked: `None` when it happened fewer than 3 times.
    pub fn recount(&self, pattern: &Pattern) -> Option<(Counts, Confidence)> {
        let g = self.groups.get(&format!("{}|{}", pattern.agent, pattern.behaviour.key()))?;
        let c = tally(&g.rows, &pattern.condition).counts;
        Some((c, Confidence::of(c.occurrences, c.opportunities, c.contradictions)?))
    }
}

/// What the rows where a condition holds add up to.
struct Tally {
    counts: Counts,
    support: Vec<u64>,
    categories: [u32; 5],
    first: i64,
    last: i64,
}

fn tally(rows: &[Row], condition: &Condition) -> Tally {
    let mut t = Tally {
        counts: Counts::default(),
        support: Vec::new(),
        categories: [0; 5],
        first: i64::MAX,
        last: i64::MIN,
    };
    for r in rows.iter().filter(|r| r.holds(condition)) {
        t.counts.add(r.flags);
        if r.flags & HAPPENED != 0 {
            t.support.push(r.id);
            t.categories[usize::from(r.category.min(4))] += 1;
            t.first = t.first.min(r.ts);
            t.last = t.last.max(r.ts);
        }
    }
    if t.support.len() > MAX_SUPPORT {
        t.support.drain(..t.support.len() - MAX_SUPPORT);
    }
    t
}

/// Counts `pattern` over `rows` and checks the bands and the contrast.
fn evaluate(pattern: Pattern, rows: &[Row], total: Counts, alpha: f64) -> Option<Found> {
    let t = tally(rows, &pattern.condition);
    let c = t.counts;
    let confidence = Confidence::of(c.occurrences, c.opportunities, c.contradictions)?;
    if pattern.condition != Condition::Always {
        let (out_occ, out_opp) =
            (total.occurrences - c.occurrences, total.opportunities - c.opportunities);
        let p = fisher_greater(
            c.occurrences,
            c.opportunities - c.occurrences,
            out_occ,
            out_opp - out_occ,
        );
        if p >= alpha {
            return None;
        }
    }
    let cats = t.categories;
    let mut category = (0..5)
        .max_by_key(|&i| (cats[i], 5 - i))
        .map_or(Category::Decisions, |i| category_of(i as u8));
    if matches!(pattern.condition, Condition::Equals(ref k, _) if k == "contact")
        && category == Category::WritingStyle
    {
        category = Category::People;
    }
    Some(Found {
        consistency: c.occurrences as f32 / c.opportunities as f32,
        pattern,
        counts: c,
        confidence,
        category,
        support: t.support,
        first_seen: t.first,
        last_seen: t.last,
    })
}

/// Every condition worth testing for one behaviour's rows.
fn conditions(rows: &[Row]) -> Vec<Condition> {
    let occ: Vec<&Row> = rows.iter().filter(|r| r.flags & HAPPENED != 0).collect();
    let mut out = vec![Condition::Always];
    // String values seen in at least MIN_OCCURRENCES occurrences (case-insensitive).
    let mut texts: BTreeMap<(String, String), (String, u32)> = BTreeMap::new();
    for r in &occ {
        for (k, v) in &r.texts {
            let e = texts.entry((k.clone(), v.to_lowercase())).or_insert((v.clone(), 0));
            e.1 += 1;
        }
    }
    for ((k, _), (v, n)) in texts {
        if n >= MIN_OCCURRENCES {
            out.push(Condition::Equals(k, v));
        }
    }
    // Numeric thresholds at the values where the behaviour happened.
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    for r in &occ {
        keys.extend(r.numbers.iter().map(|(k, _)| k.as_str()));
    }
    for key in keys {
        let value = |r: &Row| r.numbers.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        let mut at: Vec<f64> = occ.iter().filter_map(|r| value(r)).collect();
        if at.len() < MIN_OCCURRENCES as usize {
            continue;
        }
        at.sort_by(f64::total_cmp);
        at.dedup();
        let all: Vec<f64> = rows.iter().filter_map(value).collect();
        for v in spread(&at) {
            let below = all.iter().copied().filter(|x| *x < v).fold(f64::NEG_INFINITY, f64::max);
            out.push(Condition::AtLeast(key.to_string(), round_in(below, v, false)));
            let above = all.iter().copied().filter(|x| *x > v).fold(f64::INFINITY, f64::min);
            out.push(Condition::AtMost(key.to_string(), round_in(v, above, true)));
        }
    }
    // Weekdays, and times of day within them or on every day.
    for day in 0..7u8 {
        let on: Vec<u16> = occ.iter().filter(|r| r.weekday == day).map(|r| r.minute).collect();
        if on.len() < MIN_OCCURRENCES as usize {
            continue;
        }
        out.push(Condition::Weekday(day, None, None));
        let all: Vec<u16> = rows.iter().filter(|r| r.weekday == day).map(|r| r.minute).collect();
        for (from, to) in time_bounds(&on, &all) {
            out.push(Condition::Weekday(day, from, to));
        }
    }
    let on: Vec<u16> = occ.iter().map(|r| r.minute).collect();
    let all: Vec<u16> = rows.iter().map(|r| r.minute).collect();
    for (from, to) in time_bounds(&on, &all) {
        out.push(Condition::Time(from, to));
    }
    out
}

/// At most [`MAX_THRESHOLDS`] values spread evenly over `sorted` (all when fewer).
fn spread<T: Copy>(sorted: &[T]) -> Vec<T> {
    if sorted.len() <= MAX_THRESHOLDS {
        return sorted.to_vec();
    }
    (0..MAX_THRESHOLDS).map(|i| sorted[i * (sorted.len() - 1) / (MAX_THRESHOLDS - 1)]).collect()
}

/// "from" thresholds at each minute the behaviour happened, and "before" thresholds just
/// after each, rounded into the gap to the neighbouring opportunity.
fn time_bounds(on: &[u16], all: &[u16]) -> Vec<(Option<u16>, Option<u16>)> {
    let mut at = on.to_vec();
    at.sort_unstable();
    at.dedup();
    let mut out = Vec::new();
    for m in spread(&at) {
        let below = all.iter().copied().filter(|x| *x < m).max();
        out.push((Some(round_minute(below.map_or(0, |b| b + 1), m)), None));
        let above = all.iter().copied().filter(|x| *x > m).min().unwrap_or(1440);
        out.push((None, Some(round_minute(m + 1, above))));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The roundest minute in `lo..=hi` (multiples of 60, 30, 15, 5, then any).
fn round_minute(lo: u16, hi: u16) -> u16 {
    for step in [60u16, 30, 15, 5] {
        let r = lo.div_ceil(step) * step;
        if r <= hi {
            return r;
        }
    }
    lo
}

/// The roundest number in the gap between `lo` and `hi`: in `(lo, hi]` for a "≥" threshold
/// (`upper` false), in `[lo, hi)` for a "≤" one. Tries multiples of powers of ten, largest
/// first; keeps the bound itself when no round number fits.
fn round_in(lo: f64, hi: f64, upper: bool) -> f64 {
    let (keep, span) = if upper { (lo, hi) } else { (hi, lo) };
    if !span.is_finite() {
        return keep;
    }
    let mag = keep.abs().max(1.0).log10().floor() as i32;
    for e in (0..=mag).rev() {
        let step = 10f64.powi(e);
        let r = if upper { (lo / step).ceil() * step } else { (hi / step).floor() * step };
        let inside = if upper { r >= lo && r < hi } else { r > lo && r <= hi };
        if inside {
            return r;
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_round_into_their_gap() {
        assert_eq!(round_in(9_800.0, 10_450.0, false), 10_000.0);
        assert_eq!(round_in(10_450.0, 12_000.0, true), 11_000.0);
        assert_eq!(round_in(480.0, 900.0, true), 500.0);
        assert_eq!(round_in(f64::NEG_INFINITY, 10_450.0, false), 10_450.0);
        assert_eq!(round_in(10_449.0, 10_450.0, false), 10_450.0);
        assert_eq!(round_minute(14 * 60 + 11, 14 * 60 + 37), 14 * 60 + 30);
        assert_eq!(round_minute(14 * 60 + 31, 14 * 60 + 37), 14 * 60 + 35);
        assert_eq!(round_minute(14 * 60 + 36, 14 * 60 + 37), 14 * 60 + 36);
    }
}
