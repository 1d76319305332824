//! Optional phrasing by the host's language model, and the checks its answer must pass.
//!
//! The engine counts; a model may only reword. [`prompt`] gives the model the
//! observation-engine instructions with the counted evidence; [`check`] accepts its answer
//! only when it is one observation in the `<observation>` JSON format whose category, agent,
//! occurrences, confidence and promotion flag equal what the engine counted, whose quote has
//! at most 25 words and evidence at most 40, whose `signals` (if given) are ids the engine
//! counted, and whose texts hold no number, and no capitalised name, that the counted facts do
//! not already hold. Anything else is refused with the reason, and the engine's own phrasing
//! stays.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::record::Observation;

/// The observation-engine instructions (never invent, never generalise from one event), followed by the counted facts.
pub fn prompt(o: &Observation) -> String {
    format!(
        "You are the observation engine. Analyse user behavioral data and identify genuine, \
         repeated patterns. DO NOT invent. DO NOT generalise from a single event.\n\
         An observation is only valid if it has at least 3 consistent occurrences.\n\
         The pattern below was already counted; rephrase it for the user. Keep every number \
         and name as given; add none.\n\n\
         pattern: {}\ncategory: {}\nagent: {}\noccurrences: {}\nopportunities: {}\n\
         consistency: {:.0}%\ncontradictions: {}\nconfidence: {}\npromotion_candidate: {}\n\
         draft quote: {}\ndraft evidence: {}\n\n\
         Answer with exactly one observation in this format:\n<observation>\n{{\n  \
         \"category\": \"{}\",\n  \"agent\": \"{}\",\n  \"quote\": \"direct statement, max 25 \
         words\",\n  \"evidence\": \"concise phrase with supporting numbers, max 40 words\",\n  \
         \"occurrences\": {},\n  \"confidence\": \"{}\",\n  \"promotion_candidate\": {}\n}}\n\
         </observation>",
        o.pattern,
        o.category.name(),
        o.agent,
        o.occurrences,
        o.opportunities,
        o.consistency * 100.0,
        o.contradictions,
        o.confidence().name(),
        o.promotion_candidate,
        o.quote,
        o.evidence,
        o.category.name(),
        o.agent,
        o.occurrences,
        o.confidence().name(),
        o.promotion_candidate,
    )
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Number tokens in `s` ("9", "10,000" → "10000", "14:30" → "14", "30").
pub(crate) fn numbers(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut cur = String::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            cur.push(c);
        } else if (c == ',' || c == '.') && !cur.is_empty() {
            // thousands separators and decimals join the digits around them
        } else if !cur.is_empty() {
            out.insert(cur.trim_start_matches('0').to_string());
            cur.clear();
        }
    }
    out
}

/// Capitalised words that do not start a sentence.
pub(crate) fn names(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut sentence_start = true;
    for w in s.split_whitespace() {
        let clean: String = w.chars().filter(|c| c.is_alphanumeric()).collect();
        if !sentence_start && clean.chars().next().is_some_and(char::is_uppercase) {
            out.insert(clean.to_lowercase());
        }
        sentence_start = w.ends_with(['.', '!', '?', ':']);
    }
    out
}

/// Checks a model's answer against the counted observation `o`; returns the quote and
/// evidence to use, or why the answer was refused.
pub fn check(answer: &str, o: &Observation) -> Result<(String, String), String> {
    let body = match (answer.find("<observation>"), answer.find("</observation>")) {
        (Some(a), Some(b)) if b > a => &answer[a + "<observation>".len()..b],
        _ => answer,
    };
    let v: Value = body.trim().parse().map_err(|e| format!("not one JSON observation: {e}"))?;
    let field = |n: &str| v.get(n).ok_or_else(|| format!("missing \"{n}\""));
    let text = |n: &str| -> Result<String, String> {
        field(n)?.as_str().map(str::to_string).ok_or_else(|| format!("\"{n}\" is not a string"))
    };
    if text("category")? != o.category.name() {
        return Err("category differs from the counted one".into());
    }
    if text("agent")? != o.agent {
        return Err("agent differs from the counted one".into());
    }
    if field("occurrences")?.as_u64() != Some(u64::from(o.occurrences)) {
        return Err(format!("occurrences must be {}, as counted", o.occurrences));
    }
    if text("confidence")? != o.confidence().name() {
        return Err("confidence differs from the counted one".into());
    }
    if field("promotion_candidate")?.as_bool() != Some(o.promotion_candidate) {
        return Err("promotion_candidate differs from the counted one".into());
    }
    let (quote, evidence) =
        (text("quote")?.trim().to_string(), text("evidence")?.trim().to_string());
    if quote.is_empty() || words(&quote) > 25 {
        return Err("quote must have 1-25 words".into());
    }
    if evidence.is_empty() || words(&evidence) > 40 {
        return Err("evidence must have 1-40 words".into());
    }
    if let Some(ids) = v.get("signals") {
        let ids = ids.as_array().ok_or("\"signals\" is not a list")?;
        for id in ids {
            if !id.as_u64().is_some_and(|id| o.support.contains(&id)) {
                return Err(format!("signal {id} is not one the engine counted"));
            }
        }
    }
    let facts = format!(
        "{} {} {} {} {} {} {}",
        o.pattern,
        o.quote,
        o.evidence,
        o.occurrences,
        o.opportunities,
        o.contradictions,
        (o.consistency * 100.0).round()
    );
    let (known_numbers, known_names) = (numbers(&facts), facts.to_lowercase());
    for n in numbers(&quote).union(&numbers(&evidence)) {
        if !known_numbers.contains(n) {
            return Err(format!("number {n} is not in the counted evidence"));
        }
    }
    for n in names(&quote).union(&names(&evidence)) {
        if !known_names.contains(n.as_str()) {
            return Err(format!("name {n:?} is not in the counted evidence"));
        }
    }
    Ok((quote, evidence))
}

/// A language model the host lends the engine for phrasing (the WIT `llm` import, a JS
/// callback). Nothing requires one.
pub trait Llm {
    /// A completion of `prompt`, at most `max_tokens` long, or why there is none.
    fn complete(&mut self, prompt: &str, max_tokens: u32) -> std::result::Result<String, String>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::confidence::Confidence;
    use crate::record::{Category, ObservationStatus};

    fn obs() -> Observation {
        Observation {
            id: 1,
            pattern: "email|removed:semicolon|".into(),
            category: Category::WritingStyle,
            agent: "email".into(),
            quote: "Never use semicolons — the user removes them".into(),
            evidence: "removed in 9 of 10 drafts since 2024-03-03".into(),
            occurrences: 9,
            opportunities: 10,
            contradictions: 0,
            consistency: 0.9,
            counted: Confidence::High,
            boost: 0,
            promotion_candidate: true,
            support: vec![11, 12, 13],
            status: ObservationStatus::Open,
            merged_into: 0,
            created_at: 0,
            updated_at: 0,
            confirmed_at: None,
            rule: None,
            first_seen: 0,
            last_seen: 0,
            phrased_by: "engine".into(),
            episodes: Vec::new(),
        }
    }

    fn answer(quote: &str, evidence: &str, occ: u32, extra: &str) -> String {
        format!(
            "<observation>{{\"category\":\"writing-style\",\"agent\":\"email\",\"quote\":\"{quote}\",\
             \"evidence\":\"{evidence}\",\"occurrences\":{occ},\"confidence\":\"high\",\
             \"promotion_candidate\":true{extra}}}</observation>"
        )
    }

    #[test]
    fn a_faithful_rewording_passes() {
        let a = answer(
            "Avoid semicolons: the user deletes them.",
            "9 of 10 drafts lost their semicolons.",
            9,
            ",\"signals\":[11,12]",
        );
        assert!(check(&a, &obs()).is_ok(), "{:?}", check(&a, &obs()));
        assert!(prompt(&obs()).contains("occurrences: 9"));
    }

    #[test]
    fn invented_facts_are_refused() {
        let o = obs();
        for (a, why) in [
            (answer("Avoid semicolons.", "9 of 10 drafts.", 12, ""), "occurrences"),
            (answer("Avoid semicolons.", "9 of 12 drafts.", 9, ""), "number 12"),
            (answer("Avoid semicolons, says Giulia Verdi.", "9 of 10.", 9, ""), "name"),
            (answer("Avoid semicolons.", "9 of 10.", 9, ",\"signals\":[99]"), "signal 99"),
            (answer(&"word ".repeat(30), "9 of 10.", 9, ""), "quote"),
            ("I think semicolons are bad".to_string(), "JSON"),
        ] {
            let e = check(&a, &o).unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
        }
    }
}
