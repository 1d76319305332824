//! A seeded, synthetic trace of behaviour signals for the learning loop's tests and
//! benchmarks: Maria Rossi's mail agent (a fashion company's
//! owner whose agent drafts her mail) over a number of days.
//!
//! Four habits are planted, each with a little noise:
//!
//! 1. semicolons in drafts are removed (92 % of the time);
//! 2. the opening pleasantry is removed for technical clients (`segment=technical`, 95 %);
//! 3. quotes above 10,000 (`entity=quote`, `amount`) are rewritten entirely (95 %);
//! 4. replies on Friday from 14:30 (local time) are deferred (90 %).
//!
//! Mixed in: drafts sent unchanged, one-off edits (a random filler removed half the time), two-time
//! patterns (exclamation marks added for one contact twice), and a pattern that holds only
//! 60 % of the time (the sign-off removed for suppliers). [`expected`] says which rules a
//! correct learner promotes; nothing else may be promoted.
//!
//! Times are in Rome (UTC+01:00, UTC+02:00 from the last Sunday of March), so the deferral
//! window is local time across the clock change.

use crate::learn::pattern::{Behaviour, Condition, Pattern};
use crate::time::{days_from_civil, DAY};

/// splitmix64: a tiny deterministic generator (the same numbers on every platform).
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// Next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }
}

const CONTACTS: &[(&str, &str)] = &[
    ("Marco Bertelli", "client"),
    ("Giulia Conti", "client"),
    ("Paolo Ferri", "client"),
    ("Anna Galli", "client"),
    ("Luca Moretti", "technical"),
    ("Sara Ricci", "technical"),
    ("Davide Russo", "technical"),
    ("Elena Marino", "technical"),
    ("Tessuti Lombardi", "supplier"),
    ("Filati Greco", "supplier"),
    ("Bottoni Costa", "supplier"),
    ("Sofia Bruno", "client"),
];

const BODIES: &[&str] = &[
    "the autumn samples are ready; we can ship them on Tuesday",
    "the invoice for March is attached; payment terms are thirty days",
    "we received the fabric order; the delivery date is confirmed",
    "the new catalogue is online; the prices are unchanged",
    "the meeting is moved to Thursday; the agenda follows",
    "the production schedule is attached; the first batch starts next week",
    "thank you for the feedback on the prototypes; we will adjust the sizes",
    "the shipment left the warehouse this morning and should arrive soon",
    "the contract draft is attached for your review",
    "the colour cards for winter are in the post",
];

const ONE_OFF: &[&str] = &[
    "really",
    "very",
    "quite",
    "actually",
    "basically",
    "just",
    "certainly",
    "definitely",
    "of course",
    "as you know",
    "at your earliest convenience",
    "in any case",
    "honestly",
    "simply",
    "naturally",
    "please note that",
    "kindly",
    "indeed",
    "obviously",
    "clearly",
];

/// One generated signal, as the JSON object agents write.
pub fn trace(seed: u64, days: u32, per_day: u32) -> Vec<serde_json::Value> {
    let mut rng = Rng::new(seed);
    // 2024-03-04 is a Monday.
    let start = days_from_civil(2024, 3, 4) * DAY;
    let mut out = Vec::new();
    let excl_contact = CONTACTS[rng.below(CONTACTS.len() as u64) as usize].0;
    let mut excl_left = 2;
    for day in 0..i64::from(days) {
        let midnight = start + day * DAY;
        let weekday = (day % 7) as u8; // 0 = Monday
        let n = if weekday >= 5 { per_day / 8 } else { per_day };
        // Rome: +01:00, +02:00 from 2024-03-31 (day 27 of the trace).
        let offset = if midnight >= days_from_civil(2024, 3, 31) * DAY { 120 } else { 60 };
        let mut minutes: Vec<i64> =
            (0..n).map(|_| 8 * 60 + 30 + rng.below(10 * 60) as i64).collect();
        minutes.sort_unstable();
        for m in minutes {
            let (contact, segment) = CONTACTS[rng.below(CONTACTS.len() as u64) as usize];
            let first = contact.split(' ').next().unwrap_or(contact);
            let local = format!(
                "{}T{:02}:{:02}:00{}",
                crate::time::format_date(midnight),
                m / 60,
                m % 60,
                if offset == 60 { "+01:00" } else { "+02:00" }
            );
            let is_quote = rng.chance(0.15);
            let mut situation = serde_json::json!({
                "contact": contact, "entity": if is_quote { "quote" } else { "email" },
                "segment": segment,
            });
            let amount = if is_quote {
                // log-uniform 1,000–30,000, in whole euros
                let a = (1000.0f64 * 30f64.powf(rng.f64())).round();
                situation["amount"] = serde_json::json!(a);
                a
            } else {
                0.0
            };
            let friday_afternoon = weekday == 4 && m >= 14 * 60 + 30;
            if friday_afternoon && rng.chance(0.9) {
                out.push(serde_json::json!({
                    "ts": local, "kind": "deferred", "agent": "email", "situation": situation,
                    "detail": "deferred to Monday",
                }));
                continue;
            }
            let body = BODIES[rng.below(BODIES.len() as u64) as usize];
            let body = if rng.chance(0.8) { body.to_string() } else { body.replace(';', ",") };
            let mut filler = "";
            if rng.chance(0.12) {
                filler = ONE_OFF[rng.below(ONE_OFF.len() as u64) as usize];
            }
            let quote_line = if is_quote {
                format!(" Our quote for the order is {amount} euros.")
            } else {
                String::new()
            };
            let draft_body = if filler.is_empty() {
                format!("{}{}.", capital(&body), quote_line)
            } else {
                format!("{} {}{}.", capital(filler), body, quote_line)
            };
            let before = format!(
                "Dear {first},\nI hope you are doing well. {draft_body}\nBest regards,\nMaria"
            );
            // What the user sends.
            let mut sent_body = if filler.is_empty() || rng.chance(0.5) {
                draft_body.clone()
            } else {
                // A one-off edit: the filler goes, half the time.
                format!("{}{}.", capital(&body), quote_line)
            };
            if sent_body.contains(';') && rng.chance(0.92) {
                sent_body = sent_body.replace(';', if rng.chance(0.5) { "," } else { "." });
            }
            let pleasantry = !(segment == "technical" && rng.chance(0.95));
            let mut signoff = "\nBest regards,\nMaria".to_string();
            if segment == "supplier" && rng.chance(0.6) {
                signoff = "\nMaria".into();
            }
            if contact == excl_contact && excl_left > 0 && rng.chance(0.3) {
                sent_body = sent_body.trim_end_matches('.').to_string() + "!";
                excl_left -= 1;
            }
            let mut after = format!(
                "Dear {first},\n{}{sent_body}{signoff}",
                if pleasantry { "I hope you are doing well. " } else { "" }
            );
            if is_quote && amount > 10_000.0 && rng.chance(0.95) {
                after = format!(
                    "Ciao {first}, for an order this size I would rather call you tomorrow to \
                     agree the price together. Talk soon, Maria"
                );
            }
            let kind = if after == before { "approved" } else { "edited" };
            out.push(serde_json::json!({
                "ts": local, "kind": kind, "agent": "email", "situation": situation,
                "before": before, "after": after,
            }));
        }
    }
    out
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

/// Does `p` state one of the four planted habits? Returns its number (1–4).
pub fn expected(p: &Pattern) -> Option<u8> {
    if p.agent != "email" {
        return None;
    }
    match (&p.behaviour, &p.condition) {
        (Behaviour::SymbolRemoved(s), Condition::Always) if s.name() == "semicolon" => Some(1),
        (Behaviour::Part(part, c), Condition::Equals(k, v))
            if part.name() == "pleasantry"
                && *c == crate::learn::pattern::Change::Removed
                && k == "segment"
                && v.eq_ignore_ascii_case("technical") =>
        {
            Some(2)
        }
        (Behaviour::Rewrite, Condition::AtLeast(k, x))
            if k == "amount" && (5_000.0..=15_000.0).contains(x) =>
        {
            Some(3)
        }
        (Behaviour::Kind(k), Condition::Weekday(4, Some(from), None))
            if k == "deferred" && (12 * 60..=17 * 60).contains(from) =>
        {
            Some(4)
        }
        _ => None,
    }
}
