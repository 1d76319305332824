//! Calendar arithmetic on Unix milliseconds (UTC), ISO-8601 parsing, and time expressions in
//! queries ("last week", "ieri", "letzte Woche", "in March", "on 19 August, 2023", "between
//! May 3 and May 9", "before the migration").
//!
//! The engine never reads a clock: every function takes `now` in ms.

use crate::error::{Error, Result};

/// Milliseconds in a day.
pub const DAY: i64 = 86_400_000;

mod dates;
pub use dates::WRITE_UP_DAYS;

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month 1–12, day 1–31) of a day number.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

/// Parses ISO-8601 / RFC 3339: `YYYY-MM-DD`, optionally `THH:MM[:SS[.fff]]` and `Z` or
/// `±HH:MM` (no zone means UTC). Returns ms since the epoch.
pub fn parse_iso8601(s: &str) -> Result<i64> {
    parse_iso8601_offset(s).map(|(ms, _)| ms)
}

/// [`parse_iso8601`] that also returns the zone offset written in the text, in minutes east
/// of UTC (0 for `Z` or no zone): a behaviour signal keeps it to know the user's local time.
pub fn parse_iso8601_offset(s: &str) -> Result<(i64, i32)> {
    let bad = |why: &str| {
        Error::InvalidInput(format!(
            "timestamp {s:?} {why}: use ISO-8601 like 2024-03-05 or 2024-03-05T14:30:00Z"
        ))
    };
    let b = s.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Result<i64> {
        let part = b.get(r).ok_or_else(|| bad("is too short"))?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return Err(bad("has a non-digit where a number belongs"));
        }
        Ok(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(bad("does not start with YYYY-MM-DD"));
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)? as u32, num(8..10)? as u32);
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) {
        return Err(bad("is not a calendar date"));
    }
    let mut ms = days_from_civil(y, mo, d) * DAY;
    let mut i = 10;
    if i < b.len() && (b[i] == b'T' || b[i] == b't' || b[i] == b' ') {
        let (h, mi) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
        if b.get(i + 3) != Some(&b':') || h > 23 || mi > 59 {
            return Err(bad("has an invalid time of day"));
        }
        ms += (h * 60 + mi) * 60_000;
        i += 6;
        if b.get(i) == Some(&b':') {
            let sec = num(i + 1..i + 3)?;
            if sec > 60 {
                return Err(bad("has invalid seconds"));
            }
            ms += sec * 1000;
            i += 3;
            if b.get(i) == Some(&b'.') {
                let start = i + 1;
                i = start;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let frac = &s.trim()[start..i.min(start + 3)];
                if frac.is_empty() {
                    return Err(bad("has an empty fraction"));
                }
                ms += frac.parse::<i64>().unwrap_or(0) * 10i64.pow(3 - frac.len() as u32);
            }
        }
    }
    let mut offset = 0i32;
    match b.get(i) {
        None => {}
        Some(b'Z' | b'z') if i + 1 == b.len() => {}
        Some(&sign @ (b'+' | b'-')) if b.len() == i + 6 && b[i + 3] == b':' => {
            let (h, m) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if h > 18 || m > 59 {
                return Err(bad("has a zone offset outside ±18:00"));
            }
            let minutes = (h * 60 + m) as i32;
            offset = if sign == b'+' { minutes } else { -minutes };
            ms -= i64::from(offset) * 60_000;
        }
        _ => return Err(bad("has trailing characters or a malformed zone")),
    }
    Ok((ms, offset))
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Formats ms as `YYYY-MM-DD`.
pub fn format_date(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(DAY));
    format!("{y:04}-{m:02}-{d:02}")
}

/// A half-open time range `[from, to)` in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Start, inclusive.
    pub from: i64,
    /// End, exclusive.
    pub to: i64,
}

impl Window {
    /// True when `t` falls inside.
    pub fn contains(&self, t: i64) -> bool {
        self.from <= t && t < self.to
    }
}

/// What a query said about time.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeRef {
    /// A calendar window ("yesterday", "last week", "in March").
    Window(Window),
    /// Before or after an event the store must find ("before the migration"): the anchor text
    /// and whether the window ends (`before`) or starts there.
    Anchor {
        /// Text describing the event.
        event: String,
        /// True for "before", false for "after".
        before: bool,
    },
}

/// A time expression found in a query.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeExpr {
    /// What it resolved to.
    pub reference: TimeRef,
    /// The phrase as it appeared.
    pub phrase: String,
    /// What is searched for: the query with a relative phrase removed ("last week" names no
    /// content), or the whole query for a date written out (a memory may say "19 August").
    pub rest: String,
}

const MONTHS: [&[&str]; 12] = [
    &["january", "jan", "gennaio", "januar", "janvier", "enero", "janeiro"],
    &["february", "feb", "febbraio", "februar", "fevrier", "febrero", "fevereiro"],
    &["march", "mar", "marzo", "marz", "mars", "marco"],
    &["april", "apr", "aprile", "avril", "abril"],
    &["may", "maggio", "mai", "mayo", "maio"],
    &["june", "jun", "giugno", "juni", "juin", "junio", "junho"],
    &["july", "jul", "luglio", "juli", "juillet", "julio", "julho"],
    &["august", "aug", "agosto", "aout"],
    &["september", "sep", "sept", "settembre", "septembre", "septiembre", "setembro"],
    &["october", "oct", "ottobre", "oktober", "octobre", "octubre", "outubro"],
    &["november", "nov", "novembre", "noviembre", "novembro"],
    &["december", "dec", "dicembre", "dezember", "decembre", "diciembre", "dezembro"],
];

/// Relative phrases, folded (lowercase, no diacritics): (words, unit, offset). Unit `d` day,
/// `w` ISO week (Monday first), `m` calendar month, `y` year; offset 0 this, −1 last.
const RELATIVE: &[(&str, char, i64)] = &[
    ("today", 'd', 0),
    ("yesterday", 'd', -1),
    ("this week", 'w', 0),
    ("last week", 'w', -1),
    ("past week", 'w', -1),
    ("previous week", 'w', -1),
    ("this month", 'm', 0),
    ("last month", 'm', -1),
    ("this year", 'y', 0),
    ("last year", 'y', -1),
    ("oggi", 'd', 0),
    ("ieri", 'd', -1),
    ("questa settimana", 'w', 0),
    ("la settimana scorsa", 'w', -1),
    ("settimana scorsa", 'w', -1),
    ("questo mese", 'm', 0),
    ("il mese scorso", 'm', -1),
    ("mese scorso", 'm', -1),
    ("l'anno scorso", 'y', -1),
    ("anno scorso", 'y', -1),
    ("heute", 'd', 0),
    ("gestern", 'd', -1),
    ("diese woche", 'w', 0),
    ("letzte woche", 'w', -1),
    ("letzter woche", 'w', -1),
    ("vergangene woche", 'w', -1),
    ("letzten monat", 'm', -1),
    ("letzter monat", 'm', -1),
    ("diesen monat", 'm', 0),
    ("letztes jahr", 'y', -1),
    ("aujourd'hui", 'd', 0),
    ("cette semaine", 'w', 0),
    ("la semaine derniere", 'w', -1),
    ("semaine derniere", 'w', -1),
    ("le mois dernier", 'm', -1),
    ("mois dernier", 'm', -1),
    ("l'annee derniere", 'y', -1),
    ("hoy", 'd', 0),
    ("ayer", 'd', -1),
    ("esta semana", 'w', 0),
    ("la semana pasada", 'w', -1),
    ("semana pasada", 'w', -1),
    ("el mes pasado", 'm', -1),
    ("mes pasado", 'm', -1),
    ("el ano pasado", 'y', -1),
    ("hoje", 'd', 0),
    ("ontem", 'd', -1),
    ("semana passada", 'w', -1),
    ("mes passado", 'm', -1),
];

const MONTH_CUES: &[&str] =
    &["in", "during", "of", "a", "ad", "im", "en", "em", "di", "de", "del", "du", "do"];

/// Weekday names, Monday first, folded (no diacritics), in the six languages.
const WEEKDAYS: [&[&str]; 7] = [
    &["monday", "lunedi", "montag", "lundi", "lunes", "segunda"],
    &["tuesday", "martedi", "dienstag", "mardi", "martes", "terca"],
    &["wednesday", "mercoledi", "mittwoch", "mercredi", "miercoles", "quarta"],
    &["thursday", "giovedi", "donnerstag", "jeudi", "jueves", "quinta"],
    &["friday", "venerdi", "freitag", "vendredi", "viernes", "sexta"],
    &["saturday", "sabato", "samstag", "samedi", "sabado"],
    &["sunday", "domenica", "sonntag", "dimanche", "domingo"],
];

/// Small numbers written as words ("two months ago").
const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];
const BEFORE: &[&str] = &[
    "before",
    "prima della",
    "prima del",
    "prima di",
    "vor der",
    "vor dem",
    "vor",
    "avant la",
    "avant le",
    "avant",
    "antes de la",
    "antes del",
    "antes de",
    "antes da",
    "antes do",
];
const AFTER: &[&str] = &[
    "after",
    "dopo la",
    "dopo il",
    "dopo",
    "nach der",
    "nach dem",
    "nach",
    "apres la",
    "apres le",
    "apres",
    "despues de la",
    "despues del",
    "despues de",
    "depois da",
    "depois do",
];

fn fold(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfkd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .map(|c| if c == '’' { '\'' } else { c })
        .collect()
}

/// Words of `s` with their byte ranges, folded; `'` stays inside words ("l'anno").
fn words(s: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        let inside = c.is_alphanumeric() || c == '\'' || c == '’';
        match (inside, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                let w = fold(&s[st..i]);
                let w = w.strip_suffix("'s").map(str::to_string).unwrap_or(w);
                out.push((w, st, i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, in ms.
const MIN_NOW: i64 = -62_167_219_200_000;
const MAX_NOW: i64 = 253_402_300_799_999;

fn window_for(unit: char, offset: i64, now: i64) -> Window {
    let today = now.div_euclid(DAY);
    match unit {
        'd' => Window { from: (today + offset) * DAY, to: (today + offset + 1) * DAY },
        'w' => {
            // 1970-01-01 was a Thursday: Monday-based weekday = (days + 3) mod 7.
            let monday = today - (today + 3).rem_euclid(7) + 7 * offset;
            Window { from: monday * DAY, to: (monday + 7) * DAY }
        }
        'm' => {
            let (y, m, _) = civil_from_days(today);
            let idx = y * 12 + i64::from(m) - 1 + offset;
            month_window(idx.div_euclid(12), (idx.rem_euclid(12) + 1) as u32)
        }
        _ => {
            let (y, _, _) = civil_from_days(today);
            Window {
                from: days_from_civil(y + offset, 1, 1) * DAY,
                to: days_from_civil(y + offset + 1, 1, 1) * DAY,
            }
        }
    }
}

fn month_window(y: i64, m: u32) -> Window {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    Window { from: days_from_civil(y, m, 1) * DAY, to: days_from_civil(ny, nm, 1) * DAY }
}

fn cut(query: &str, from: usize, to: usize) -> String {
    let rest = format!("{} {}", &query[..from], &query[to..]);
    rest.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Finds the first time expression in `query`, resolved against `now`. A date written out
/// (`dates`: "on 19 August, 2023", "in July 2023", "between August 11 and August 15 2023",
/// "before 2023-04-10") is looked for first, then relative phrases, months and weekdays, then
/// "before/after" an event.
///
/// A named month means its latest occurrence not after `now` ("in March" asked in February
/// 2025 means March 2024). "N days/weeks ago" and "last N days" are understood in English.
pub fn parse_query_time(query: &str, now: i64) -> Option<TimeExpr> {
    // Calendar arithmetic below multiplies days by DAY: outside years 0–9999 (a host's clock
    // gone wrong) it could overflow, so such a `now` resolves no time expression.
    if !(MIN_NOW..=MAX_NOW).contains(&now) {
        return None;
    }
    let w = words(query);
    let folded: Vec<&str> = w.iter().map(|x| x.0.as_str()).collect();
    let mk = |reference, i: usize, j: usize| TimeExpr {
        reference,
        phrase: query[w[i].1..w[j].2].to_string(),
        rest: cut(query, w[i].1, w[j].2),
    };
    // Dates written out ("on 19 August, 2023", "between May 3 and May 9"): the most specific.
    // Its words stay in what is searched for: a memory may say the date ("the calendar for
    // 2024-11-27", "the meeting on 19 August").
    if let Some((win, i, j)) = dates::find(query, &w, now) {
        return Some(TimeExpr { rest: query.to_string(), ..mk(TimeRef::Window(win), i, j) });
    }
    // Relative phrases, longest first at each position.
    for i in 0..w.len() {
        let mut best: Option<(usize, char, i64)> = None;
        for (phrase, unit, off) in RELATIVE {
            // The phrase's words against the query's from `i` (words hold no spaces), without
            // building strings: most phrases differ at their first word.
            let mut n = 0;
            let same = phrase.split(' ').all(|p| {
                n += 1;
                folded.get(i + n - 1) == Some(&p)
            });
            if same && best.is_none_or(|b| n > b.0) {
                best = Some((n, *unit, *off));
            }
        }
        if let Some((n, unit, off)) = best {
            return Some(mk(TimeRef::Window(window_for(unit, off, now)), i, i + n - 1));
        }
        // "3 days ago", "two weeks ago", "last 10 days", "2 months ago" (that calendar month).
        // At most 10,000 years back, so `days × DAY` stays far inside i64.
        let number = folded[i]
            .parse::<i64>()
            .ok()
            .or_else(|| NUMBER_WORDS.iter().position(|n| *n == folded[i]).map(|n| n as i64));
        if let Some(n) = number.filter(|n| (0..=120_000).contains(n)) {
            let unit = folded.get(i + 1).copied().unwrap_or("");
            if unit.trim_end_matches('s') == "month" && folded.get(i + 2) == Some(&"ago") {
                let (y, m, _) = civil_from_days(now.div_euclid(DAY));
                let back = i64::from(m) - 1 - n;
                let (y, m) = (y + back.div_euclid(12), back.rem_euclid(12) as u32 + 1);
                return Some(mk(TimeRef::Window(month_window(y, m)), i, i + 2));
            }
            let days = match unit.trim_end_matches('s') {
                "day" => n,
                "week" => 7 * n,
                "month" => 30 * n,
                _ => -1,
            };
            if days >= 0 && folded.get(i + 2) == Some(&"ago") {
                let start = now - days * DAY;
                let span = if unit.starts_with("day") { DAY } else { days.min(7) * DAY };
                let win = Window {
                    from: start.div_euclid(DAY) * DAY,
                    to: start.div_euclid(DAY) * DAY + span,
                };
                return Some(mk(TimeRef::Window(win), i, i + 2));
            }
            if days >= 0 && i > 0 && matches!(folded[i - 1], "last" | "past") {
                let win = Window { from: now - days * DAY, to: now + 1 };
                return Some(mk(TimeRef::Window(win), i - 1, i + 1));
            }
        }
    }
    // "in March", "a marzo", "im März", "en mars".
    for i in 1..w.len() {
        if !MONTH_CUES.contains(&folded[i - 1]) {
            continue;
        }
        if let Some(m) = MONTHS.iter().position(|names| names.contains(&folded[i])) {
            let (y, cur, _) = civil_from_days(now.div_euclid(DAY));
            let m = m as u32 + 1;
            let y = if m > cur { y - 1 } else { y };
            return Some(mk(TimeRef::Window(month_window(y, m)), i - 1, i));
        }
    }
    // "last Friday", "venerdì scorso", "letzten Freitag", "el viernes pasado", "vendredi
    // dernier", "sexta passada": the latest such day before today. A bare weekday ("may I
    // deploy on Friday?") may be in the future and is left alone.
    for i in 0..w.len() {
        if let Some(d) = WEEKDAYS.iter().position(|names| names.contains(&folded[i])) {
            let before =
                i > 0 && matches!(folded[i - 1], "last" | "past" | "letzten" | "vergangenen");
            let after = matches!(
                folded.get(i + 1).copied(),
                Some("scorso" | "scorsa" | "pasado" | "dernier" | "passada" | "passado")
            );
            if !(before || after) {
                continue;
            }
            let today = now.div_euclid(DAY);
            // 1970-01-01 was a Thursday: Monday-based weekday = (days + 3) mod 7.
            let back = ((today + 3).rem_euclid(7) - d as i64 - 1).rem_euclid(7) + 1;
            let day = today - back;
            let win = Window { from: day * DAY, to: (day + 1) * DAY };
            let (a, b) = if before { (i - 1, i) } else { (i, i + 1) };
            return Some(mk(TimeRef::Window(win), a, b));
        }
    }
    // "before the migration", "dopo il rilascio".
    for (cues, before) in [(BEFORE, true), (AFTER, false)] {
        for i in 0..w.len() {
            for cue in cues.iter() {
                let n = cue.split(' ').count();
                if i + n < w.len() && folded[i..i + n].join(" ") == *cue {
                    let mut j = i + n;
                    if matches!(folded[j], "the" | "we" | "our" | "la" | "il" | "lo" | "le" | "el")
                        && j + 1 < w.len()
                    {
                        j += 1;
                    }
                    let end = (j + 3).min(w.len());
                    let event = query[w[j].1..w[end - 1].2].to_string();
                    return Some(mk(TimeRef::Anchor { event, before }, i, end - 1));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> i64 {
        parse_iso8601(s).unwrap()
    }

    fn window(q: &str, now: &str) -> (String, String, String) {
        let e = parse_query_time(q, at(now)).unwrap_or_else(|| panic!("no time in {q:?}"));
        let TimeRef::Window(w) = e.reference else { panic!("{q:?} gave an anchor") };
        (format_date(w.from), format_date(w.to - 1), e.rest)
    }

    #[test]
    fn iso_dates_parse_and_round_trip() {
        assert_eq!(at("1970-01-01"), 0);
        assert_eq!(at("1970-01-02T00:00:01Z"), DAY + 1000);
        assert_eq!(at("2024-03-05T10:00:00+02:00"), at("2024-03-05T08:00:00Z"));
        assert_eq!(at("2024-02-29T00:00:00.250Z") % 1000, 250);
        for bad in ["", "2024-13-01", "2023-02-29", "2024-03-05T25:00", "yesterday", "2024-03-05Tx"]
        {
            assert_eq!(parse_iso8601(bad).unwrap_err().code(), "INVALID_INPUT", "{bad}");
        }
        for d in [-1000, 0, 19_000, 20_000] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }

    #[test]
    fn weekdays_months_ago_and_month_ends() {
        // 2024-11-20 is a Wednesday.
        let now = "2024-11-20T15:00:00Z";
        let day = |d: &str| (d.to_string(), d.to_string());
        for (q, want) in [
            ("what did Acme ask on the call last Friday", day("2024-11-15")),
            ("cosa è successo mercoledì scorso", day("2024-11-13")),
            ("was war letzten Dienstag", day("2024-11-19")),
            ("qué pasó el lunes pasado", day("2024-11-18")),
        ] {
            let (from, to, _) = window(q, now);
            assert_eq!((from, to), want, "{q}");
        }
        let (from, to, rest) = window("who did we interview two months ago", now);
        assert_eq!((from.as_str(), to.as_str()), ("2024-09-01", "2024-09-30"));
        assert_eq!(rest.trim(), "who did we interview");
        let (from, to, _) = window("the outage at the end of October", now);
        assert_eq!((from.as_str(), to.as_str()), ("2024-10-01", "2024-10-31"));
        let (from, _, _) = window("what happened 11 months ago", now);
        assert_eq!(from, "2023-12-01");
    }

    #[test]
    fn relative_phrases_resolve_in_six_languages() {
        // 2024-11-20 is a Wednesday.
        let now = "2024-11-20T15:00:00Z";
        let last_week = ("2024-11-11".to_string(), "2024-11-17".to_string());
        for q in [
            "what did we decide last week about X",
            "cosa abbiamo deciso la settimana scorsa su X",
            "was haben wir letzte Woche über X entschieden",
            "la semaine dernière",
            "la semana pasada",
        ] {
            let (f, t, _) = window(q, now);
            assert_eq!((f, t), last_week, "{q}");
        }
        assert_eq!(window("yesterday's deploy", now).0, "2024-11-19");
        assert_eq!(window("ieri", now).0, "2024-11-19");
        assert_eq!(window("gestern", now).0, "2024-11-19");
        let (f, t, rest) = window("invoices in March", now);
        assert_eq!(
            (f.as_str(), t.as_str(), rest.as_str()),
            ("2024-03-01", "2024-03-31", "invoices")
        );
        assert_eq!(window("in December", now).0, "2023-12-01");
        assert_eq!(window("a marzo", now).0, "2024-03-01");
        assert_eq!(window("last month", now).0, "2024-10-01");
        assert_eq!(window("3 days ago", now).0, "2024-11-17");
        assert!(parse_query_time("may I deploy on Friday?", at(now)).is_none());
    }

    #[test]
    fn before_and_after_name_an_event() {
        let e = parse_query_time("which Node version before the migration", 0).unwrap();
        assert_eq!(e.reference, TimeRef::Anchor { event: "migration".into(), before: true });
        assert_eq!(e.rest, "which Node version");
        let e = parse_query_time("errori dopo il rilascio", 0).unwrap();
        assert_eq!(e.reference, TimeRef::Anchor { event: "rilascio".into(), before: false });
    }

    #[test]
    fn extreme_clocks_and_numbers_resolve_nothing_instead_of_overflowing() {
        for now in [i64::MAX, i64::MIN, MAX_NOW + 1] {
            assert!(parse_query_time("what happened last week", now).is_none());
        }
        let now = at("2025-02-10T12:00:00Z");
        assert!(parse_query_time("99999999999999999 months ago", now).is_none());
        assert!(parse_query_time("the last 9223372036854775807 days", now).is_none());
        assert!(parse_query_time("3 days ago", now).is_some());
        assert!(parse_query_time("last year", MAX_NOW).is_some());
    }
}
