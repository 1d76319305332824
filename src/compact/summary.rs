//! Structured summaries and the deterministic extractive summariser.
//!
//! A summary keeps what a later task needs and counts the rest:
//!
//! | section | what goes there |
//! |---|---|
//! | `goal` | goals, tasks, requests and constraints (event types `goal`, `task`, `request`, `constraint`) |
//! | `decisions` | decisions (`decision` events, or text starting "decided"/"chose"), with the verdict as their reason |
//! | `lessons` | failures that carry a verdict, and surprises: "what happened — why" |
//! | `open_issues` | failures without a verdict and no later success on the same tool and stage |
//! | `next_steps` | plans and to-dos (`plan`, `todo`, `next` events, or text starting "next:"/"todo:") |
//! | `notes` | anything else that is not a plain success (messages, requests, observations) |
//! | `routine` | plain successes, counted by what they did: "12× deployed … to staging" (names and identifiers, which vary, go to `mentions`) |
//! | `mentions` | names, amounts, dates and identifiers of the counted lines, so an exact identifier still finds the summary |
//! | `evidence` | the ids summarised, oldest first (progressive disclosure: the raw rows are one lookup away) |
//!
//! Lines are taken in that order of priority until the text reaches the tier's token cap
//! (estimate: characters / 4); a line whose episode's embedding is within
//! `Compaction::redundant_cosine` of a line already kept says the same thing: it is not
//! repeated, the kept line counts it instead ("… (×8)": a pattern confirmed eight times).
//! What did not fit is counted in `omitted`; every source stays listed in `evidence`.
//! Each line is cut to [`LINE_CHARS`] characters at a word boundary.

use serde::{Deserialize, Serialize};

use crate::embed::cosine;
use crate::record::{Episode, Outcome};

/// Longest line kept from one source (characters).
pub const LINE_CHARS: usize = 240;
/// Most mentions kept.
const MAX_MENTIONS: usize = 60;

/// A compaction summary: the structure behind a summary record's text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Summary {
    /// 1 weekly, 2 monthly.
    pub tier: u8,
    /// The period covered ("2026-W14", "2026-W14..2026-W16", "2026-03").
    pub period: String,
    /// The agent.
    pub agent: String,
    /// The contact (first entity), or empty.
    pub contact: String,
    /// Raw episodes it stands for (through weekly summaries for a monthly one).
    pub episodes: u32,
    /// Goals and constraints.
    pub goal: Vec<String>,
    /// Key decisions with their reason.
    pub decisions: Vec<String>,
    /// Failures with their verdicts, and surprises.
    pub lessons: Vec<String>,
    /// Failures left unresolved.
    pub open_issues: Vec<String>,
    /// Plans and to-dos.
    pub next_steps: Vec<String>,
    /// Other lines naming people, amounts, dates or identifiers.
    pub notes: Vec<String>,
    /// Routine work counted: (what, how many).
    pub routine: Vec<(String, u32)>,
    /// Names, amounts, dates and identifiers of the counted lines.
    pub mentions: Vec<String>,
    /// Lines left out by the token cap or as redundant.
    pub omitted: u32,
    /// The records summarised (episode ids; weekly summary ids for a monthly one).
    pub evidence: Vec<u64>,
    /// `extractive`, or `llm` when the host's model wrote `text` and it passed verification.
    pub written_by: String,
}

/// Estimated tokens of `text` (characters / 4, rounded up).
pub fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

fn clip(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() <= LINE_CHARS {
        return s.to_string();
    }
    let cut: String = s.chars().take(LINE_CHARS).collect();
    let end = cut.rfind(' ').filter(|&i| i > LINE_CHARS / 2).unwrap_or(cut.len());
    format!("{}…", cut[..end].trim_end())
}

fn starts(text: &str, words: &[&str]) -> bool {
    let t = text.trim_start().to_lowercase();
    words.iter().any(|w| t.starts_with(w))
}

/// Tokens that name a person, an amount, a date or an identifier: anything with a digit,
/// and capitalised words that do not start a sentence.
pub fn mentions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut sentence_start = true;
    for w in text.split_whitespace() {
        let clean = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '$' && c != '€');
        let capital = clean.chars().next().is_some_and(char::is_uppercase);
        if !clean.is_empty()
            && (clean.chars().any(|c| c.is_ascii_digit()) || (capital && !sentence_start))
        {
            out.push(clean.to_string());
        }
        sentence_start = w.ends_with(['.', '!', '?', ':']);
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Lessons,
    Decisions,
    OpenIssues,
    Goal,
    NextSteps,
    Notes,
}

/// What a routine success did, in its own words without the names, amounts and identifiers
/// that vary from one run to the next: its first sentence, at most [`LABEL_WORDS`] words, with
/// "…" where words were dropped inside it, not ending on a function word ("Sent invoice INV-12
/// to Acme." → "sent invoice"; "Email to Marco Bertelli: The samples are ready." → "email to
/// …: the samples are ready"). The stage, tool or event type when nothing is left.
fn routine_label(e: &Episode) -> String {
    let varying = mentions(&e.text);
    let mut words: Vec<String> = Vec::new();
    let mut dropped = false;
    for raw in e.text.split_whitespace() {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if w.is_empty() {
            continue;
        }
        if varying.iter().any(|m| m == w) {
            dropped = true;
        } else {
            if std::mem::take(&mut dropped) && !words.is_empty() {
                words.push("…".into());
            }
            words.push(w.to_lowercase());
        }
        if raw.ends_with(':') || raw.ends_with(',') {
            if std::mem::take(&mut dropped) && !words.is_empty() {
                words.push("…".into());
            }
            if let Some(last) = words.last_mut() {
                last.push(if raw.ends_with(':') { ':' } else { ',' });
            }
        }
        if raw.ends_with(['.', '!', '?']) && !words.is_empty() || words.len() >= LABEL_WORDS {
            break;
        }
    }
    loop {
        match words.last_mut() {
            Some(w) if w.ends_with([':', ',']) => {
                w.pop();
            }
            Some(w) if w == "…" || is_function_word(w) => {
                words.pop();
            }
            _ => break,
        }
    }
    if !words.is_empty() {
        return words.join(" ");
    }
    let s = &e.situation;
    let what = [&s.stage, &s.tool, &e.kind].into_iter().find(|x| !x.is_empty());
    what.map_or_else(|| "task".to_string(), |w| w.to_lowercase())
}

/// Most words in a routine label.
const LABEL_WORDS: usize = 12;

/// Words a label should not end on (English, and the other five languages' commonest).
fn is_function_word(w: &str) -> bool {
    const WORDS: &[&str] = &[
        "a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "at", "by", "with", "from",
        "is", "are", "was", "were", "il", "la", "lo", "di", "da", "per", "e", "a", "le", "de",
        "des", "du", "et", "pour", "der", "die", "das", "und", "zu", "für", "el", "los", "las",
        "y", "para", "o", "do", "da", "em",
    ];
    WORDS.contains(&w)
}

/// Keeps the routine counts within the cap: the most frequent first; those that do not fit
/// are added up as "other routine successes".
fn fit_routine(s: &mut Summary, cap: usize) {
    let mut other: u32 = 0;
    s.routine.retain(|(w, n)| {
        let keep = w != OTHER;
        if !keep {
            other += n;
        }
        keep
    });
    s.routine.sort_by_key(|r| std::cmp::Reverse(r.1)); // stable: first seen first among equals
    loop {
        if other > 0 {
            s.routine.push((OTHER.to_string(), other));
        }
        if s.fits(cap) || s.routine.len() <= 1 {
            break;
        }
        if other > 0 {
            s.routine.pop();
        }
        match s.routine.pop() {
            Some((_, n)) => other += n,
            None => break,
        }
    }
}

const OTHER: &str = "other routine successes";

fn classify(e: &Episode, later_success: bool) -> Option<(Section, String)> {
    let kind = e.kind.to_lowercase();
    let with_reason = |sep: &str| {
        if e.verdict.is_empty() {
            clip(&e.text)
        } else {
            clip(&format!("{}{sep}{}", e.text.trim(), e.verdict.trim()))
        }
    };
    let failed = matches!(e.outcome, Outcome::Failure | Outcome::Partial);
    Some(if (failed && !e.verdict.is_empty()) || e.surprise {
        (Section::Lessons, with_reason(" — "))
    } else if kind == "decision" || starts(&e.text, &["decided", "chose", "decision:"]) {
        (Section::Decisions, with_reason(" — because "))
    } else if failed && !later_success {
        (Section::OpenIssues, clip(&e.text))
    } else if matches!(kind.as_str(), "goal" | "task" | "request" | "constraint") {
        (Section::Goal, clip(&e.text))
    } else if matches!(kind.as_str(), "plan" | "todo" | "next")
        || starts(&e.text, &["next:", "todo:", "next step"])
    {
        (Section::NextSteps, clip(&e.text))
    } else if e.outcome != Outcome::Success {
        (Section::Notes, clip(&e.text))
    } else {
        return None;
    })
}

/// The period label of a group of times, per tier.
fn period(tier: u8, times: &[i64]) -> String {
    use super::group::{month_label, month_of, week_label, week_of};
    let (lo, hi) = (times.iter().min().copied(), times.iter().max().copied());
    let (Some(lo), Some(hi)) = (lo, hi) else { return String::new() };
    let (a, b) = if tier >= 2 {
        (month_label(month_of(lo)), month_label(month_of(hi)))
    } else {
        (week_label(week_of(lo)), week_label(week_of(hi)))
    };
    if a == b {
        a
    } else {
        format!("{a}..{b}")
    }
}

impl Summary {
    /// The text a summary record holds (searched, and shown): one line per non-empty section.
    /// The period, agent and contact are the record's own fields (time, agent, entities), not
    /// repeated here: a summary should match a query as well as one of its events would, not
    /// be diluted by its heading ([`Summary::heading`] is for display).
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut line = |name: &str, items: &[String]| {
            if !items.is_empty() {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(name);
                out.push_str(": ");
                out.push_str(&items.join("; "));
            }
        };
        line("Lessons", &self.lessons);
        line("Decisions", &self.decisions);
        line("Open issues", &self.open_issues);
        line("Goal", &self.goal);
        line("Next steps", &self.next_steps);
        line("Notes", &self.notes);
        let routine: Vec<String> =
            self.routine.iter().map(|(what, n)| format!("{n}× {what}")).collect();
        line("Routine successes", &routine);
        line("Mentions", &self.mentions);
        out
    }

    /// "Weekly summary 2026-W14, agent ops, contact acme (9 episodes)."
    pub fn heading(&self) -> String {
        let what = if self.tier >= 2 { "Monthly overview" } else { "Weekly summary" };
        let mut h = format!("{what} {}", self.period);
        if !self.agent.is_empty() {
            h.push_str(&format!(", agent {}", self.agent));
        }
        if !self.contact.is_empty() {
            h.push_str(&format!(", contact {}", self.contact));
        }
        h.push_str(&format!(" ({} episodes).", self.episodes));
        h
    }

    fn fits(&self, cap: usize) -> bool {
        tokens(&self.text()) <= cap
    }
}

/// The extractive weekly summary of `sources` (oldest first; `vectors[i]` is `sources[i]`'s
/// embedding when known) within `cap` tokens. See the module docs.
pub fn weekly(
    sources: &[Episode],
    vectors: &[Option<Vec<f32>>],
    cap: usize,
    redundant: f32,
) -> Summary {
    let first = sources.first();
    let mut s = Summary {
        tier: 1,
        period: period(1, &sources.iter().map(|e| e.created_at).collect::<Vec<_>>()),
        agent: first.map(|e| e.agent.clone()).unwrap_or_default(),
        contact: first
            .and_then(|e| e.entities.first())
            .map(|c| c.to_lowercase())
            .unwrap_or_default(),
        episodes: sources.len() as u32,
        evidence: sources.iter().map(|e| e.id).collect(),
        written_by: "extractive".into(),
        ..Summary::default()
    };
    let mut lines: Vec<(Section, String, usize)> = Vec::new();
    let mut routine: Vec<(String, u32)> = Vec::new();
    let mut mentioned: Vec<String> = Vec::new();
    for (i, e) in sources.iter().enumerate() {
        let later_success = sources[i + 1..].iter().any(|l| {
            l.outcome == Outcome::Success
                && l.situation.tool == e.situation.tool
                && l.situation.stage == e.situation.stage
        });
        match classify(e, later_success) {
            Some((section, line)) => lines.push((section, line, i)),
            None => {
                let label = routine_label(e);
                match routine.iter_mut().find(|(w, _)| *w == label) {
                    Some((_, n)) => *n += 1,
                    None => routine.push((label, 1)),
                }
                for m in e.entities.iter().cloned().chain(mentions(&e.text)) {
                    if !mentioned.iter().any(|x| x.eq_ignore_ascii_case(&m)) {
                        mentioned.push(m);
                    }
                }
            }
        }
    }
    lines.sort_by_key(|l| l.0); // stable: time order within a section
                                // (source index, section, position in the section, times seen)
    let mut dropped: Vec<String> = Vec::new();
    let mut kept: Vec<(usize, Section, usize, u32)> = Vec::new();
    for (section, line, i) in lines {
        let names = |k: usize| -> Vec<String> {
            mentions(&sources[k].text).iter().map(|m| m.to_lowercase()).collect()
        };
        let mine = names(i);
        let same = kept.iter().position(|&(j, sec, ..)| {
            // Same section, same meaning, and nothing named here that the kept line lacks
            // (two invoices with different numbers are two facts, however alike).
            sec == section
                && mine.iter().all(|m| names(j).contains(m))
                && match (&vectors.get(i), &vectors.get(j)) {
                    (Some(Some(a)), Some(Some(b))) => {
                        a.len() == b.len() && cosine(a, b) >= redundant
                    }
                    _ => sources[i].text == sources[j].text,
                }
        });
        if let Some(k) = same {
            let (j, sec, pos, n) = kept[k];
            let base = classify(&sources[j], true).map(|l| l.1).unwrap_or_default();
            let old = std::mem::replace(
                &mut section_mut(&mut s, sec)[pos],
                format!("{base} (×{})", n + 1),
            );
            if s.fits(cap) {
                kept[k].3 = n + 1;
            } else {
                section_mut(&mut s, sec)[pos] = old;
                s.omitted += 1;
            }
            continue;
        }
        let list = section_mut(&mut s, section);
        list.push(line);
        let pos = list.len() - 1;
        if s.fits(cap) {
            kept.push((i, section, pos, 1));
        } else {
            // Left out for the cap: its names and identifiers still go to the mentions.
            section_mut(&mut s, section).pop();
            s.omitted += 1;
            dropped.extend(mentions(&sources[i].text));
        }
    }
    dropped.extend(mentioned);
    let mentioned = dropped;
    s.routine = routine;
    fit_routine(&mut s, cap);
    add_mentions(&mut s, mentioned, cap);
    s
}

fn section_mut(s: &mut Summary, section: Section) -> &mut Vec<String> {
    match section {
        Section::Lessons => &mut s.lessons,
        Section::Decisions => &mut s.decisions,
        Section::OpenIssues => &mut s.open_issues,
        Section::Goal => &mut s.goal,
        Section::NextSteps => &mut s.next_steps,
        Section::Notes => &mut s.notes,
    }
}

/// Adds the names and identifiers the text does not already hold, while they fit.
fn add_mentions(s: &mut Summary, mentioned: Vec<String>, cap: usize) {
    let shown = s.text().to_lowercase();
    for m in mentioned {
        if s.mentions.len() >= MAX_MENTIONS {
            break;
        }
        let lower = m.to_lowercase();
        if s.mentions.iter().any(|x| x.to_lowercase() == lower) || shown.contains(&lower) {
            continue;
        }
        s.mentions.push(m);
        if !s.fits(cap) {
            s.mentions.pop();
            break;
        }
    }
}

/// The monthly overview of weekly summaries `weeks` (oldest first) within `cap` tokens: their
/// sections merged (lines deduplicated; next steps from the latest week only), routine
/// counts summed, and `evidence` listing the weekly summaries' ids (`ids`).
pub fn monthly(weeks: &[Summary], ids: &[u64], times: &[i64], cap: usize) -> Summary {
    let first = weeks.first();
    let mut s = Summary {
        tier: 2,
        period: period(2, times),
        agent: first.map(|w| w.agent.clone()).unwrap_or_default(),
        contact: first.map(|w| w.contact.clone()).unwrap_or_default(),
        episodes: weeks.iter().map(|w| w.episodes).sum(),
        evidence: ids.to_vec(),
        omitted: weeks.iter().map(|w| w.omitted).sum(),
        written_by: "extractive".into(),
        ..Summary::default()
    };
    let mut routine: Vec<(String, u32)> = Vec::new();
    for w in weeks {
        for (what, n) in &w.routine {
            match routine.iter_mut().find(|(x, _)| x == what) {
                Some((_, m)) => *m += n,
                None => routine.push((what.clone(), *n)),
            }
        }
    }
    let mut dropped: Vec<String> = Vec::new();
    let latest_steps = weeks.last().map(|w| w.next_steps.clone()).unwrap_or_default();
    let sections: [(Section, Vec<&String>); 6] = [
        (Section::Lessons, weeks.iter().flat_map(|w| &w.lessons).collect()),
        (Section::Decisions, weeks.iter().flat_map(|w| &w.decisions).collect()),
        (Section::OpenIssues, weeks.iter().flat_map(|w| &w.open_issues).collect()),
        (Section::Goal, weeks.iter().flat_map(|w| &w.goal).collect()),
        (Section::NextSteps, latest_steps.iter().collect()),
        (Section::Notes, weeks.iter().flat_map(|w| &w.notes).collect()),
    ];
    for (section, items) in sections {
        for line in items {
            if section_mut(&mut s, section).contains(line) {
                continue;
            }
            section_mut(&mut s, section).push(line.clone());
            if !s.fits(cap) {
                section_mut(&mut s, section).pop();
                s.omitted += 1;
                dropped.extend(mentions(line));
            }
        }
    }
    let mut mentioned = dropped;
    mentioned.extend(weeks.iter().flat_map(|w| w.mentions.iter().cloned()));
    s.routine = routine;
    fit_routine(&mut s, cap);
    add_mentions(&mut s, mentioned, cap);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(id: u64, text: &str, outcome: Outcome, verdict: &str) -> Episode {
        let mut e = Episode::new(text, 1_767_225_600_000 + id as i64 * 3_600_000);
        e.id = id;
        e.agent = "ops".into();
        e.kind = "tool_call".into();
        e.outcome = outcome;
        e.verdict = verdict.into();
        e.situation.stage = "deploy".into();
        e
    }

    #[test]
    fn routine_labels_read_as_what_was_done() {
        let label = |t: &str| routine_label(&ep(1, t, Outcome::Success, ""));
        assert_eq!(
            label("Email to Marco Bertelli: The colour cards for winter are ready. See the PDF."),
            "email to …: the colour cards for winter are ready"
        );
        assert_eq!(
            label("checked one two three four five six seven eight nine ten of eleven twelve"),
            "checked one two three four five six seven eight nine ten",
            "at most 12 words, not ending on \"of\""
        );
        assert_eq!(label("Sent invoice INV-12 to Acme."), "sent invoice");
        assert_eq!(label("deploy 7 went fine"), "deploy … went fine");
        assert_eq!(
            label("The meeting is moved to Thursday, the agenda follows."),
            "the meeting is moved to …, the agenda follows"
        );
        assert_eq!(label("Notes: all green. Then more words follow"), "notes: all green");
        assert_eq!(label("Email to Marco:"), "email");
        // Names vary, the label does not: the same work counts together.
        assert_eq!(
            label("Email to Marco Bertelli: The samples are ready."),
            label("Email to Dana Whitfield: The samples are ready.")
        );
        assert_eq!(label("Q-1 Q-2"), "deploy", "nothing left: the stage");
    }

    #[test]
    fn routine_is_counted_lessons_and_identifiers_are_kept() {
        let mut sources: Vec<Episode> = (1..=12)
            .map(|i| ep(i, &format!("deploy {i} went fine"), Outcome::Success, ""))
            .collect();
        sources.push(ep(
            13,
            "Deploy of build B-7731 failed",
            Outcome::Failure,
            "the cache held a stale lockfile",
        ));
        let mut d = ep(14, "Decided to pin Node 22", Outcome::Unknown, "Node 18 is end of life");
        d.kind = "decision".into();
        sources.push(d);
        sources.push(ep(
            15,
            "Invoice INV-2291 for 4,200 EUR sent to Dana Whitfield",
            Outcome::Unknown,
            "",
        ));
        let vectors = vec![None; sources.len()];
        let s = weekly(&sources, &vectors, 400, 0.95);
        assert_eq!(s.routine, vec![("deploy … went fine".to_string(), 12)]);
        assert_eq!(
            s.lessons,
            vec!["Deploy of build B-7731 failed — the cache held a stale lockfile"]
        );
        assert_eq!(s.decisions, vec!["Decided to pin Node 22 — because Node 18 is end of life"]);
        assert_eq!(s.notes.len(), 1);
        assert_eq!(s.evidence, (1..=15).collect::<Vec<u64>>());
        let text = s.text();
        assert!(text.contains("Routine successes: 12× deploy … went fine"), "{text}");
        assert!(text.starts_with("Lessons: Deploy of build B-7731 failed"), "{text}");
        assert_eq!(s.heading(), "Weekly summary 2026-W01, agent ops (15 episodes).");
        assert!(tokens(&text) <= 400);
    }

    #[test]
    fn the_cap_holds_and_what_is_left_out_is_counted() {
        let sources: Vec<Episode> = (1..=15)
            .map(|i| {
                ep(
                    i,
                    &format!("Run {i} failed on host H{i} {}", "x ".repeat(80)),
                    Outcome::Failure,
                    "disk full",
                )
            })
            .collect();
        let s = weekly(&sources, &vec![None; 15], 200, 0.95);
        assert!(tokens(&s.text()) <= 200, "{}", s.text());
        assert!(s.omitted > 0);
        assert_eq!(s.lessons.len() as u32 + s.omitted, 15);
        assert_eq!(s.evidence.len(), 15, "every source stays in the evidence index");
    }

    #[test]
    fn redundant_lines_go_by_embedding() {
        let sources: Vec<Episode> = (1..=5)
            .map(|i| ep(i, "Login failed for the admin user", Outcome::Failure, "expired token"))
            .collect();
        let v = vec![Some(vec![1.0, 0.0]); 5];
        let s = weekly(&sources, &v, 400, 0.95);
        assert_eq!(s.lessons, vec!["Login failed for the admin user — expired token (×5)"]);
        assert_eq!(s.omitted, 0);
        // The same meaning with another identifier is another fact: kept.
        let mut other = sources.clone();
        other[4].text = "Login failed for the admin user on host H7".into();
        let s = weekly(&other, &v, 400, 0.95);
        assert_eq!(s.lessons.len(), 2, "{:?}", s.lessons);
    }

    #[test]
    fn months_sum_counts_and_merge_lines() {
        let a = Summary {
            tier: 1,
            episodes: 8,
            routine: vec![("deploy".into(), 7)],
            lessons: vec!["L".into()],
            ..Summary::default()
        };
        let b = Summary {
            tier: 1,
            episodes: 6,
            routine: vec![("deploy".into(), 5)],
            lessons: vec!["L".into(), "M".into()],
            ..Summary::default()
        };
        let m = monthly(&[a, b], &[10, 20], &[1_767_225_600_000, 1_767_225_600_000], 600);
        assert_eq!(m.routine, vec![("deploy".to_string(), 12)]);
        assert_eq!(m.lessons, vec!["L", "M"]);
        assert_eq!(m.episodes, 14);
        assert_eq!(m.evidence, vec![10, 20]);
        assert_eq!(m.period, "2026-01");
    }
}
