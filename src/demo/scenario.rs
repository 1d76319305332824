//! The mail agent's main job, end to end, as data: Maria Rossi (Nico Rossi Ltd, formal-concise,
//! Italian) and 90 days of her agent's work, with her client Marco Bertelli (Bertelli & Co:
//! formal, no exclamation marks, pays on time) among a dozen contacts.
//!
//! [`scenario`] returns the days in order. Each day holds the episodes worth remembering (every
//! email to Marco, every quote, and the events of the Bertelli account: orders, payments, a
//! complaint), the behaviour signals of [`trace`](super::trace::trace) (the drafts Maria
//! edited, rejected or deferred) and the time of that night's nightly run. Her profile and
//! Marco's are facts she set herself, before day 1, among them one `sensitive` fact (her IBAN)
//! that no context may show. At the end a new email from Marco arrives.
//!
//! Replayed through an engine (`mnemo demo`, the inspector's "context" tab), the nightly runs
//! compact the old emails into weekly summaries and learn the four habits of the trace as
//! rules: no semicolons; no pleasantries with technical clients; quotes above 10,000 not
//! drafted; Friday afternoon replies deferred to Monday. Everything is seeded: the same
//! scenario on every platform.

use serde::Serialize;
use serde_json::{json, Value};

use crate::time::{days_from_civil, parse_iso8601, DAY};

/// The namespace the demo writes to.
pub const NAMESPACE: &str = "maria";

/// One day of the scenario.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Day {
    /// 1-based.
    pub day: u32,
    /// Episodes to remember, in time order (the engine's episode JSON).
    pub episodes: Vec<Value>,
    /// Behaviour signals, in time order (the engine's signal JSON).
    pub signals: Vec<Value>,
    /// When that night's nightly job runs (ms since the Unix epoch: 02:00 UTC after the day).
    pub night: i64,
}

/// The whole scenario.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scenario {
    /// The namespace to replay it into.
    pub namespace: &'static str,
    /// Facts Maria set herself before day 1 (the engine's fact JSON; origin `user`).
    pub facts: Vec<Value>,
    /// When she set them (ms since the Unix epoch: the evening before day 1).
    pub facts_at: i64,
    /// The days, in order.
    pub days: Vec<Day>,
    /// The email that arrives after the last day: the task the context is assembled for.
    pub incoming: String,
    /// When it arrives (ms since the Unix epoch).
    pub incoming_at: i64,
}

/// Marco's account, day by day: (day, local time, text, outcome, verdict).
const BERTELLI: &[(u32, &str, &str, &str, &str)] = &[
    (3, "11:20", "Bertelli & Co paid invoice INV-2024-031 (EUR 8,400) on the due date.", "", ""),
    (12, "15:05", "Call with Marco Bertelli: Bertelli & Co wants the spring linen line; samples by 2 April.", "", ""),
    (20, "10:40", "Sent Marco Bertelli the spring linen samples; he asked for navy and sand colours.", "", ""),
    (33, "09:15", "Marco Bertelli confirmed order ORD-2024-118: 250 linen shirts at EUR 7,250, delivery 15 May.", "success", ""),
    (41, "16:30", "Bertelli & Co paid invoice INV-2024-058 (EUR 7,250) two days early.", "", ""),
    (
        47,
        "12:10",
        "Marco Bertelli complained that 12 shirts of ORD-2024-118 arrived with the wrong buttons; replacements sent the same day.",
        "failure",
        "check the button lot before shipping a Bertelli order",
    ),
    (60, "17:45", "Marco Bertelli asked for a quote on 400 wool coats for the autumn; Maria called him and agreed EUR 18,000.", "success", ""),
    (75, "10:05", "Marco Bertelli asked that deliveries go to the Bertelli & Co warehouse in Como, not the Milan office.", "", ""),
    (86, "09:50", "Bertelli & Co paid invoice INV-2024-091 (EUR 18,000) on time.", "", ""),
];

/// Maria's profile and Marco's, as she set them.
fn facts() -> Vec<Value> {
    let fact = |key: &str, value: &str, policy: &str| {
        json!({"key": key, "value": value, "source": "explicit", "origin": "user",
            "policy": policy})
    };
    vec![
        fact("user.name", "Maria Rossi", "auto-inject"),
        fact("user.company", "Nico Rossi Ltd", "auto-inject"),
        fact("user.tone", "formal and concise", "auto-inject"),
        fact("user.language", "Italian", "auto-inject"),
        fact("user.iban", "IT60 X054 2811 1010 0000 0123 456", "sensitive"),
        fact("marco_bertelli.company", "Bertelli & Co", "auto-inject"),
        fact("marco_bertelli.tone", "formal, no exclamation marks", "auto-inject"),
        fact("marco_bertelli.payments", "reliable: every invoice paid on time", "auto-inject"),
    ]
}

/// The first line of what Maria sent, without the greeting and the sign-off.
fn body(after: &str) -> String {
    let lines: Vec<&str> = after.lines().collect();
    let text = if lines.len() >= 2 { lines[1] } else { after };
    let text = text.trim_start_matches("I hope you are doing well. ").trim();
    // The trace's drafts append the quote line without a full stop before it.
    text.replace(" Our quote", ". Our quote").replace("..", ".")
}

/// `days` days of Maria's mail (90 in the demo; at least 1), seeded.
pub fn scenario(seed: u64, days: u32) -> Scenario {
    let days = days.max(1); // (a day to file everything under)
    let signals = super::trace::trace(seed, days, 8);
    let start = days_from_civil(2024, 3, 4) * DAY;
    let mut out: Vec<Day> = (1..=days)
        .map(|d| Day {
            day: d,
            episodes: Vec::new(),
            signals: Vec::new(),
            night: start + i64::from(d) * DAY + 2 * 3_600_000,
        })
        .collect();
    let day_of = |ts: i64| ((ts - start).div_euclid(DAY)).clamp(0, i64::from(days) - 1) as usize;
    for s in signals {
        let Some(ts) = s["ts"].as_str().and_then(|t| parse_iso8601(t).ok()) else { continue };
        let d = day_of(ts);
        let contact = s["situation"]["contact"].as_str().unwrap_or_default().to_string();
        let quote = s["situation"]["entity"] == "quote";
        if let (Some(after), true) = (s["after"].as_str(), contact == "Marco Bertelli" || quote) {
            let mut entities = vec![contact.clone()];
            if contact == "Marco Bertelli" {
                entities.push("Bertelli & Co".into());
            }
            let what = if quote { "Quote email" } else { "Email" };
            out[d].episodes.push(json!({
                "text": format!("{what} to {contact}: {}", body(after)),
                "ts": s["ts"], "agent": "email", "kind": "email", "entities": entities,
                "tags": [if quote { "quote" } else { "email" }], "source": "user",
                // Sent as she approved it: a routine success (recall weighs it below events).
                "outcome": "success",
            }));
        }
        out[d].signals.push(s);
    }
    for &(day, time, text, outcome, verdict) in BERTELLI {
        if day > days {
            continue;
        }
        let date = crate::time::format_date(start + i64::from(day - 1) * DAY);
        let e = json!({
            "text": text, "ts": format!("{date}T{time}:00Z"), "agent": "email", "kind": "account",
            "entities": ["Marco Bertelli", "Bertelli & Co"], "tags": ["bertelli"],
            "outcome": outcome, "verdict": verdict, "source": "user",
        });
        let list = &mut out[day as usize - 1].episodes;
        let at = |v: &Value| v["ts"].as_str().and_then(|t| parse_iso8601(t).ok()).unwrap_or(0);
        let pos = list.iter().position(|x| at(x) > at(&e)).unwrap_or(list.len());
        list.insert(pos, e);
    }
    Scenario {
        namespace: NAMESPACE,
        facts: facts(),
        facts_at: start - 3 * 3_600_000,
        days: out,
        incoming: "New email from Marco Bertelli (Bertelli & Co): Buongiorno Maria, could you \
                   send us a quote for 150 wool scarves for the winter collection, delivered to \
                   our Como warehouse by October? Cordiali saluti, Marco"
            .into(),
        incoming_at: start + i64::from(days) * DAY + 9 * 3_600_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenario_is_seeded_ordered_and_about_marco() {
        let a = scenario(1, 90);
        assert_eq!(serde_json::to_string(&a).ok(), serde_json::to_string(&scenario(1, 90)).ok());
        assert_eq!(a.days.len(), 90);
        let episodes: Vec<&Value> = a.days.iter().flat_map(|d| &d.episodes).collect();
        let marco = episodes.iter().filter(|e| e["entities"][0] == "Marco Bertelli").count();
        assert!(marco >= 40 && episodes.len() >= 100, "{marco} of {}", episodes.len());
        for d in &a.days {
            let ts = |v: &Value| parse_iso8601(v["ts"].as_str().unwrap()).unwrap();
            for w in d.signals.windows(2).chain(d.episodes.windows(2)) {
                assert!(ts(&w[0]) <= ts(&w[1]), "day {} out of order", d.day);
            }
            for v in d.signals.iter().chain(&d.episodes) {
                assert!(ts(v) < d.night, "day {}: {v} after its night", d.day);
            }
        }
        assert!(a.incoming_at > a.days[89].night);
    }
}
