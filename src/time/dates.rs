//! Calendar dates written in a query: "on 19 August, 2023", "May 3, 2023", "3 maggio 2023",
//! "2023-08-19", "in July 2023", "in 2022", and ranges built from them: "between August 11
//! and August 15 2023", "from 3 to 9 June", "before April 10, 2023", "after 2023-05-01",
//! "since March 2024".
//!
//! A date written without its year means its latest occurrence not after `now` ("on 19
//! August" asked in March 2025 is 19 August 2024), as a month alone does.
//!
//! The window is over when memories were written, and what happened on a day is often written
//! down the day after ("yesterday we…", "last week we…"): so a window ends [`WRITE_UP_DAYS`]
//! after the last day its words name. "on 19 August" is 19–20 August; "before August 3" is
//! everything up to 3 August included (a note of 3 August about "last week" is about the time
//! before it); "after" and "since" run to `now`.
//!
//! Month names are those of the six languages `parse_query_time` reads. "may", "mar" and "mai"
//! are also ordinary words ("may 3 users log in"), so with a day and no year they count as a
//! month only after a cue such as "on", "in", "before" or "between".

use super::{
    civil_from_days, days_from_civil, days_in_month, month_window, Window, DAY, MONTHS,
    NUMBER_WORDS, WEEKDAYS,
};

/// Days after the last day a date names that its window still covers: memories about a day
/// are often written the day after.
pub const WRITE_UP_DAYS: i64 = 1;

/// Words that may stand before a date and belong to it ("on 19 August", "in 2023").
const CUES: &[&str] =
    &["on", "in", "during", "am", "im", "le", "el", "il", "em", "no", "na", "nel", "en", "the"];
const BEFORE: &[&str] = &["before", "prima", "vor", "avant", "antes"];
const AFTER: &[&str] = &["after", "dopo", "nach", "apres", "despues", "depois"];
const SINCE: &[&str] = &["since", "dal", "seit", "depuis", "desde"];
/// Words that open a range ("between … and …").
const RANGE_OPEN: &[&str] = &["between", "from", "tra", "fra", "zwischen", "entre", "du", "von"];
/// Words that join its two ends.
const RANGE_JOIN: &[&str] =
    &["and", "to", "until", "till", "e", "und", "et", "y", "a", "au", "al", "bis"];
/// Month names that are also ordinary words.
const AMBIGUOUS: &[&str] = &["may", "mar", "mai"];
/// Words after a four-digit number that make it a quantity, not a year ("in 2000 ms").
const UNITS: &[&str] = &[
    "ms", "s", "sec", "secs", "seconds", "minutes", "bytes", "kb", "mb", "gb", "items", "rows",
    "users", "requests", "tokens", "words", "lines", "eur", "usd", "euro", "euros", "dollars",
];

/// A date as written: any of its parts may be missing.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Written {
    year: Option<i64>,
    month: Option<u32>,
    day: Option<u32>,
}

type Words = [(String, usize, usize)];

fn word(w: &Words, i: usize) -> Option<&str> {
    w.get(i).map(|x| x.0.as_str())
}

fn month_of(s: &str) -> Option<u32> {
    MONTHS.iter().position(|names| names.contains(&s)).map(|m| m as u32 + 1)
}

/// A day of the month: 1–31, as "19" or "19th", "1st", "2nd", "3rd".
fn day_of(s: &str) -> Option<u32> {
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &s[digits.len()..];
    if digits.is_empty() || digits.len() > 2 || !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

/// A year written with four digits.
fn year_of(s: &str) -> Option<i64> {
    (s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// The year written just after word `j` ("August 19, 2023", "19 de agosto de 2023"), with the
/// index of the last word used (`j` when there is none).
fn year_after(w: &Words, j: usize) -> (Option<i64>, usize) {
    let k = if matches!(word(w, j + 1), Some("de" | "del")) { j + 2 } else { j + 1 };
    match word(w, k).and_then(year_of) {
        Some(y) if !word(w, k + 1).is_some_and(|u| UNITS.contains(&u)) => (Some(y), k),
        _ => (None, j),
    }
}

/// True when the query's characters between words `a` and `b` (inclusive) are only the
/// separators of an ISO or slashed date ("2023-08-19").
fn joined(q: &str, w: &Words, a: usize, b: usize) -> bool {
    (a..b).all(|k| matches!(q.get(w[k].2..w[k + 1].1), Some("-" | "/")))
}

/// True when word `i - 1` is a word that leads into a date.
fn cued(w: &Words, i: usize) -> bool {
    i > 0
        && word(w, i - 1).is_some_and(|p| {
            [CUES, BEFORE, AFTER, SINCE, RANGE_OPEN, RANGE_JOIN].iter().any(|l| l.contains(&p))
        })
}

/// The date that starts at word `i`, with the index of its last word.
fn date_at(q: &str, w: &Words, i: usize) -> Option<(Written, usize)> {
    let at = |k| word(w, k);
    // 2023-08-19, 2023/08/19.
    if let (Some(y), Some(m), Some(d)) = (
        at(i).and_then(year_of),
        at(i + 1).and_then(|s| s.parse::<u32>().ok()),
        at(i + 2).and_then(|s| s.parse::<u32>().ok()),
    ) {
        if joined(q, w, i, i + 2) && (1..=12).contains(&m) {
            return Some((Written { year: Some(y), month: Some(m), day: Some(d) }, i + 2));
        }
    }
    // 19 August [2023], 19th of August, 19 de agosto de 2023.
    if let Some(d) = at(i).and_then(day_of) {
        let j = if matches!(at(i + 1), Some("of" | "de" | "di")) { i + 2 } else { i + 1 };
        if let Some(m) = at(j).and_then(month_of) {
            let (year, end) = year_after(w, j);
            return Some((Written { year, month: Some(m), day: Some(d) }, end));
        }
    }
    let name = at(i)?;
    let m = month_of(name)?;
    // August 19[, 2023].
    if let Some(d) = at(i + 1).and_then(day_of) {
        let (year, end) = year_after(w, i + 1);
        if year.is_none() && AMBIGUOUS.contains(&name) && !cued(w, i) {
            return None;
        }
        return Some((Written { year, month: Some(m), day: Some(d) }, end));
    }
    // August 2023.
    let (year, end) = year_after(w, i);
    year.map(|y| (Written { year: Some(y), month: Some(m), day: None }, end))
}

/// A year alone after a cue ("in 2023"), not a quantity ("in 2000 ms").
fn year_at(w: &Words, i: usize) -> Option<Written> {
    let y = word(w, i).and_then(year_of)?;
    let cue = i > 0 && word(w, i - 1).is_some_and(|p| CUES.contains(&p) && p != "the");
    let unit = word(w, i + 1).is_some_and(|u| UNITS.contains(&u));
    (cue && !unit).then_some(Written { year: Some(y), month: None, day: None })
}

/// The days `[from, to)` (day numbers) a written date covers, exactly; a missing year is the
/// latest one that puts the date on or before `today` (or `year`, when given: the other end of
/// a range).
fn days(d: Written, today: i64, year: Option<i64>) -> Option<(i64, i64)> {
    let (cy, cm, cd) = civil_from_days(today);
    let y = match d.year.or(year) {
        Some(y) => y,
        None => {
            let (m, day) = (d.month?, d.day.unwrap_or(1));
            if (m, day) > (cm, cd) {
                cy - 1
            } else {
                cy
            }
        }
    };
    if !(1..=9999).contains(&y) {
        return None;
    }
    Some(match (d.month, d.day) {
        (Some(m), Some(day)) => {
            if day > days_in_month(y, m) {
                return None;
            }
            let first = days_from_civil(y, m, day);
            (first, first + 1)
        }
        (Some(m), None) => {
            let w = month_window(y, m);
            (w.from / DAY, w.to / DAY)
        }
        _ => (days_from_civil(y, 1, 1), days_from_civil(y + 1, 1, 1)),
    })
}

/// The first date or range of dates written in the query `q` (`w`: its folded words with
/// their byte spans), resolved against `now`: the window and the first and last word of the
/// phrase (cue words included).
pub(super) fn find(q: &str, w: &Words, now: i64) -> Option<(Window, usize, usize)> {
    let today = now.div_euclid(DAY);
    // Words already read as part of a date that does not exist.
    let mut skip_to = 0;
    for i in 0..w.len() {
        if i < skip_to {
            continue;
        }
        let Some((first, end)) = date_at(q, w, i).or_else(|| year_at(w, i).map(|y| (y, i))) else {
            match range_of_days(q, w, i, today) {
                Some(found) => return Some(found),
                None => continue,
            }
        };
        let prev = if i > 0 { word(w, i - 1) } else { None };
        // "between August 11 and August 15 2023", "from 3 June to 9 June".
        if prev.is_some_and(|p| RANGE_OPEN.contains(&p))
            && word(w, end + 1).is_some_and(|j| RANGE_JOIN.contains(&j))
        {
            let range = date_at(q, w, end + 2).and_then(|(second, last)| {
                let (_, to) = days(second, today, None)?;
                let year = second.year.or(Some(civil_from_days(to - 1).0));
                let (from, _) = days(first, today, year)?;
                let win = Window { from: from * DAY, to: (to + WRITE_UP_DAYS) * DAY };
                (from < to).then_some((win, i - 1, last))
            });
            if range.is_some() {
                return range;
            }
        }
        // A date that does not exist (30 February) is not read as one.
        let Some((from, to)) = days(first, today, None) else {
            skip_to = end + 1;
            continue;
        };
        let open = |a: &[&str]| prev.is_some_and(|p| a.contains(&p));
        // "the week before August 3", "two days after 2023-05-01", "the Sunday before …".
        let span = if open(BEFORE) || open(AFTER) { span_before(w, i - 1) } else { None };
        let (win, start) = if let Some((n, first_word)) = span {
            let win = if open(BEFORE) {
                Window { from: (from - n) * DAY, to: (from + WRITE_UP_DAYS) * DAY }
            } else {
                Window { from: to * DAY, to: (to + n + WRITE_UP_DAYS) * DAY }
            };
            (win, first_word)
        } else if open(BEFORE) {
            (Window { from: i64::MIN, to: (from + WRITE_UP_DAYS) * DAY }, i - 1)
        } else if open(AFTER) || open(SINCE) {
            // Up to now; a date still to come gives an empty window, never an inverted one.
            let start = if open(AFTER) { to * DAY } else { from * DAY };
            (Window { from: start, to: now.saturating_add(1).max(start) }, i - 1)
        } else {
            let start = if open(CUES) { i - 1 } else { i };
            (Window { from: from * DAY, to: (to + WRITE_UP_DAYS) * DAY }, start)
        };
        return Some((win, start, end));
    }
    None
}

/// Units of a span before or after a date ("the week before …"), in days: a weekend is looked
/// for in the week, a weekday in the week too.
const SPANS: &[(&str, i64)] = &[
    ("day", 1),
    ("days", 1),
    ("night", 1),
    ("week", 7),
    ("weeks", 7),
    ("weekend", 7),
    ("month", 31),
    ("months", 31),
    ("year", 366),
];

/// The span named before the "before"/"after" at word `cue` ("the week", "two weeks", "a few
/// days", "the Sunday"), in days, with the index of its first word.
fn span_before(w: &Words, cue: usize) -> Option<(i64, usize)> {
    let unit = word(w, cue.checked_sub(1)?)?;
    let per = SPANS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, d)| *d)
        .or_else(|| WEEKDAYS.iter().any(|names| names.contains(&unit)).then_some(7))?;
    let count = cue.checked_sub(2).and_then(|k| {
        let c = word(w, k)?;
        let n = c
            .parse::<i64>()
            .ok()
            .or_else(|| NUMBER_WORDS.iter().position(|x| *x == c).map(|n| n as i64));
        match (n, c) {
            (Some(n), _) if (1..=60).contains(&n) => Some((n, k)),
            (_, "the" | "a" | "that") => Some((1, k)),
            (_, "few") => Some((3, k)),
            _ => None,
        }
    });
    let (n, first) = count.unwrap_or((1, cue - 1));
    // "a few days": the article before "few" belongs to the phrase.
    let first = if first > 0 && word(w, first) == Some("few") && word(w, first - 1) == Some("a") {
        first - 1
    } else {
        first
    };
    Some((n * per, first))
}

/// "between 11 and 15 August [2023]", "dal 3 al 9 giugno": a range whose first end is a day
/// alone, taking its month and year from the second.
fn range_of_days(q: &str, w: &Words, i: usize, today: i64) -> Option<(Window, usize, usize)> {
    let d = word(w, i).and_then(day_of)?;
    let opened = i > 0 && word(w, i - 1).is_some_and(|p| RANGE_OPEN.contains(&p));
    if !opened || !word(w, i + 1).is_some_and(|j| RANGE_JOIN.contains(&j)) {
        return None;
    }
    let (second, last) = date_at(q, w, i + 2)?;
    second.day?;
    let to = days(second, today, None)?;
    let (y, m, _) = civil_from_days(to.0);
    let (from, _) = days(Written { year: Some(y), month: Some(m), day: Some(d) }, today, None)?;
    let win = Window { from: from * DAY, to: (to.1 + WRITE_UP_DAYS) * DAY };
    (from < to.1).then_some((win, i - 1, last))
}

#[cfg(test)]
mod tests {
    use super::super::{format_date, parse_iso8601, parse_query_time, TimeRef};

    /// The window (first day, last day) and the rest of the query, for `q` asked at `now`.
    fn read(q: &str, now: &str) -> Option<(String, String, String)> {
        let e = parse_query_time(q, parse_iso8601(now).unwrap())?;
        let TimeRef::Window(w) = e.reference else { return None };
        let last = if w.to == i64::MAX { "…".into() } else { format_date(w.to - 1) };
        let first = if w.from == i64::MIN { "…".into() } else { format_date(w.from) };
        Some((first, last, e.rest))
    }

    fn days(q: &str, now: &str) -> (String, String) {
        let (a, b, _) = read(q, now).unwrap_or_else(|| panic!("no date in {q:?}"));
        (a, b)
    }

    fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn days_written_out_cover_that_day_and_the_next_for_write_ups() {
        let now = "2024-03-10T12:00:00Z";
        for q in [
            "What food did Sam share a photo of on 19 August, 2023?",
            "what did Sam cook on August 19, 2023",
            "what happened on the 19th of August 2023",
            "cosa è successo il 19 agosto 2023",
            "qué pasó el 19 de agosto de 2023",
            "was war am 19. August 2023",
            "le 19 août 2023",
            "deploys on 2023-08-19",
            "deploys on 2023/08/19",
        ] {
            assert_eq!(days(q, now), pair("2023-08-19", "2023-08-20"), "{q}");
        }
        let (_, _, rest) =
            read("What food did Sam share a photo of on 19 August, 2023?", now).unwrap();
        assert_eq!(rest, "What food did Sam share a photo of on 19 August, 2023?");
        // No year: the latest such day not after now.
        assert_eq!(days("what did we ship on 19 August", now), pair("2023-08-19", "2023-08-20"));
        assert_eq!(days("what did we ship on 2 March", now), pair("2024-03-02", "2024-03-03"));
    }

    #[test]
    fn months_years_and_ranges() {
        let now = "2024-03-10T12:00:00Z";
        assert_eq!(days("invoices in July 2022", now), pair("2022-07-01", "2022-08-01"));
        assert_eq!(
            days("What setback did Melanie face in October 2023?", now),
            pair("2023-10-01", "2023-11-01")
        );
        assert_eq!(days("how many trips in 2023", now), pair("2023-01-01", "2024-01-01"));
        assert_eq!(
            days("Where was John between August 11 and August 15 2023?", now),
            pair("2023-08-11", "2023-08-16")
        );
        assert_eq!(
            days("errors between 11 and 15 August 2023", now),
            pair("2023-08-11", "2023-08-16")
        );
        assert_eq!(days("from 3 June to 9 June 2023", now), pair("2023-06-03", "2023-06-10"));
        assert_eq!(days("what did we deploy before April 10, 2023", now), pair("…", "2023-04-10"));
        let after = days("errors after 2024-03-01", now);
        assert_eq!(after, pair("2024-03-02", "2024-03-10"));
        assert_eq!(days("everything since March 2024", now).0, "2024-03-01");
        // A span before or after a date: up to the date itself, for write-ups made on it.
        assert_eq!(
            days("What did John do the week before August 3, 2023 with his kids?", now),
            pair("2023-07-27", "2023-08-03")
        );
        assert_eq!(
            days("her puppy, got two weeks before August 11, 2023", now),
            pair("2023-07-28", "2023-08-11")
        );
        assert_eq!(
            days("shown on the Sunday before October 25, 2022", now),
            pair("2022-10-18", "2022-10-25")
        );
        assert_eq!(days("a few days after 2024-03-01", now), pair("2024-03-02", "2024-03-05"));
    }

    #[test]
    fn no_arrangement_of_date_words_panics() {
        // Every sequence of up to four of these, at ordinary and extreme clocks: windows must
        // come out ordered or not at all.
        let vocab = [
            "on",
            "between",
            "and",
            "before",
            "the",
            "week",
            "two",
            "31",
            "29",
            "1st",
            "9999",
            "1000",
            "february",
            "may",
            "2023-02-29",
            "-",
            "/",
            "de",
            "since",
            "after",
        ];
        let clocks =
            [parse_iso8601("2024-03-10").unwrap(), 0, super::super::MIN_NOW, super::super::MAX_NOW];
        let n = vocab.len();
        for len in 1..=4u32 {
            for code in 0..n.pow(len) {
                let mut c = code;
                let words: Vec<&str> = (0..len)
                    .map(|_| {
                        let w = vocab[c % n];
                        c /= n;
                        w
                    })
                    .collect();
                let q = words.join(" ");
                for now in clocks {
                    if let Some(e) = parse_query_time(&q, now) {
                        if let TimeRef::Window(w) = e.reference {
                            assert!(w.from <= w.to, "{q:?} at {now}: {w:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn numbers_and_words_that_are_not_dates() {
        let now = "2024-03-10T12:00:00Z";
        for q in [
            "may 3 users log in at once",
            "timeout in 2000 ms",
            "the 2023 roadmap",
            "ticket 19 of the tracker",
            "what happened on 30 February 2023",
            "port 8080",
        ] {
            assert_eq!(read(q, now), None, "{q}");
        }
        // A month alone is still the month rule's ("in March": its latest occurrence).
        assert_eq!(days("invoices in March", now), pair("2024-03-01", "2024-03-31"));
        assert_eq!(days("on May 3", now), pair("2023-05-03", "2023-05-04"));
    }
}
