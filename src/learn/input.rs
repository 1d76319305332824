//! Signals from JSON: the shape agents write (one object per signal, the CLI's JSON Lines),
//! checked field by field so a bad signal is a typed error and nothing is stored.
//!
//! ```json
//! {"ts":"2024-03-01T15:04:00+01:00","kind":"edited","agent":"email",
//!  "situation":{"contact":"Marco Bertelli","entity":"email","segment":"client","amount":12500},
//!  "before":"Dear Marco; thanks for…","after":"Dear Marco, thanks for…"}
//! ```
//!
//! Fields: `ts` (ISO-8601; its zone is the user's UTC offset), `kind` (edited, rejected,
//! approved, corrected, exception, deferred, or `custom:NAME`), `agent`, optional `category`,
//! `situation` (`contact`, `entity`, `tool`, `stage`, `error_class`/`errorClass`, any other key
//! a free attribute: string or number), `detail`, `before`/`after`, `correction`
//! `{from, to}`, `source`, `trust` (0–1), `episode` (an episode id).

use std::collections::BTreeMap;

use serde_json::Value;

use super::features::EditFeatures;
use crate::error::{Error, Result};
use crate::record::signal::{Attr, Signal, SignalKind, SignalSituation};
use crate::time::parse_iso8601_offset;

/// Longest draft or sent text accepted (characters).
pub const MAX_TEXT: usize = 20_000;
/// Longest detail.
pub const MAX_DETAIL: usize = 280;
/// Most free situation attributes.
pub const MAX_ATTRS: usize = 32;
/// Longest attribute key, agent name or string value.
pub const MAX_VALUE: usize = 256;

fn bad(msg: String) -> Error {
    Error::InvalidInput(msg)
}

fn opt_str<'a>(v: &'a Value, name: &str) -> Result<Option<&'a str>> {
    match v.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(bad(format!("signal field {name:?} must be a string, not {other}"))),
    }
}

fn short(s: &str, name: &str, max: usize) -> Result<String> {
    if s.chars().count() > max {
        return Err(bad(format!("signal field {name:?} is longer than {max} characters")));
    }
    Ok(s.trim().to_string())
}

/// A signal from its JSON object; `keep_texts` keeps `before`/`after` besides their edit
/// features (off by default: privacy). The id is assigned when it is stored.
pub fn signal_from_json(v: &Value, keep_texts: bool) -> Result<Signal> {
    if !v.is_object() {
        return Err(bad("a signal must be a JSON object".into()));
    }
    let ts_text = opt_str(v, "ts")?.ok_or_else(|| {
        bad("a signal needs \"ts\": an ISO-8601 time with the user's zone, e.g. \
             2024-03-01T15:04:00+01:00"
            .into())
    })?;
    let (ts, offset_min) = parse_iso8601_offset(ts_text)?;
    if !(0..(1i64 << 43)).contains(&ts) {
        return Err(bad(format!("signal time {ts_text:?} is outside 1970–2248")));
    }
    let kind = SignalKind::parse(
        opt_str(v, "kind")?.ok_or_else(|| bad("a signal needs a \"kind\"".into()))?,
    )?;
    let agent = short(opt_str(v, "agent")?.unwrap_or(""), "agent", 64)?;
    if agent.is_empty() || agent.contains('|') {
        return Err(
            bad("a signal needs an \"agent\" (the agent whose work it was; no '|')".into()),
        );
    }
    let (category, category_given) = match opt_str(v, "category")? {
        Some(c) => (c.parse()?, true),
        None => (kind.default_category(), false),
    };
    let situation = situation(v.get("situation"))?;
    let detail = short(opt_str(v, "detail")?.unwrap_or(""), "detail", MAX_DETAIL)?;
    let before = opt_str(v, "before")?;
    let mut after = opt_str(v, "after")?;
    for (name, t) in [("before", before), ("after", after)] {
        if t.is_some_and(|t| t.chars().count() > MAX_TEXT) {
            return Err(bad(format!(
                "signal field {name:?} is longer than {MAX_TEXT} characters: send the draft, \
                 not an attachment"
            )));
        }
    }
    if after.is_some() && before.is_none() {
        return Err(bad("\"after\" needs \"before\" (the agent's draft) to compare with".into()));
    }
    if kind == SignalKind::Approved && after.is_none() {
        after = before; // approved as drafted
    }
    let correction = match v.get("correction") {
        None | Some(Value::Null) => None,
        Some(c) => {
            let part = |n: &str| -> Result<String> {
                let s = opt_str(c, n)?.unwrap_or("");
                let s = short(s, &format!("correction.{n}"), MAX_VALUE)?;
                if s.is_empty() || s.contains(['>', '|']) {
                    return Err(bad(format!(
                        "\"correction\" needs a non-empty \"{n}\" (without '>' or '|')"
                    )));
                }
                Ok(s)
            };
            Some((part("from")?, part("to")?))
        }
    };
    let no_behaviour = match kind {
        SignalKind::Edited => before.is_none() || after.is_none(),
        SignalKind::Corrected => correction.is_none(),
        SignalKind::Exception => situation.error_class.is_empty(),
        _ => false,
    };
    if no_behaviour {
        return Err(bad(format!(
            "a {} signal carries no behaviour without {}",
            kind.name(),
            match kind {
                SignalKind::Edited => "\"before\" and \"after\"",
                SignalKind::Corrected => "\"correction\": {\"from\", \"to\"}",
                _ => "\"situation\": {\"error_class\"}",
            }
        )));
    }
    let trust = match v.get("trust") {
        None | Some(Value::Null) => 1.0,
        Some(t) => match t.as_f64() {
            Some(x) if (0.0..=1.0).contains(&x) => x as f32,
            _ => {
                return Err(bad(format!("signal \"trust\" must be a number from 0 to 1, not {t}")))
            }
        },
    };
    let episode = match v.get("episode") {
        None | Some(Value::Null) => None,
        Some(e) => Some(
            e.as_u64().ok_or_else(|| bad(format!("signal \"episode\" must be an id, not {e}")))?,
        ),
    };
    let features = match (before, after) {
        (Some(b), Some(a)) => Some(EditFeatures::of(b, a)),
        _ => None,
    };
    let texts = match (keep_texts, before, after) {
        (true, Some(b), Some(a)) => Some((b.to_string(), a.to_string())),
        _ => None,
    };
    Ok(Signal {
        id: 0,
        ts,
        offset_min,
        kind,
        agent,
        category,
        category_given,
        situation,
        detail,
        correction,
        source: short(opt_str(v, "source")?.unwrap_or("agent"), "source", 64)?,
        trust,
        episode,
        features,
        texts,
        reporter: crate::record::outcome::Reporter::Host,
    })
}

fn situation(v: Option<&Value>) -> Result<SignalSituation> {
    let mut s = SignalSituation::default();
    let map = match v {
        None | Some(Value::Null) => return Ok(s),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(bad(format!("signal \"situation\" must be an object, not {other}")))
        }
    };
    let mut attrs = BTreeMap::new();
    for (k, val) in map {
        let key = if k == "errorClass" { "error_class" } else { k.as_str() };
        if key.is_empty() || key.len() > 64 || key.contains(['=', '<', '>', '&', '|']) {
            return Err(bad(format!(
                "situation key {k:?} must be 1-64 characters without = < > & |"
            )));
        }
        let named = ["contact", "entity", "tool", "stage", "error_class"].contains(&key);
        let value = match val {
            Value::String(x) => {
                let x = short(x, k, MAX_VALUE)?;
                if x.contains('|') || x.contains('&') {
                    return Err(bad(format!("situation value of {k:?} must not contain | or &")));
                }
                Attr::Str(x)
            }
            Value::Number(n) if !named => match n.as_f64() {
                Some(x) if x.is_finite() && x.abs() < 1e15 => Attr::Num(x),
                _ => return Err(bad(format!("situation number {k:?} = {n} is out of range"))),
            },
            Value::Null => continue,
            other => {
                return Err(bad(format!(
                    "situation {k:?} must be a string{}, not {other}",
                    if named { "" } else { " or a number" }
                )))
            }
        };
        match (key, value) {
            ("contact", Attr::Str(x)) => s.contact = x,
            ("entity", Attr::Str(x)) => s.entity = x,
            ("tool", Attr::Str(x)) => s.tool = x,
            ("stage", Attr::Str(x)) => s.stage = x,
            ("error_class", Attr::Str(x)) => s.error_class = x,
            (_, value) => {
                attrs.insert(key.to_string(), value);
            }
        }
    }
    if attrs.len() > MAX_ATTRS {
        return Err(bad(format!("a situation holds at most {MAX_ATTRS} free attributes")));
    }
    s.attrs = attrs;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_documented_example_parses() {
        let s = signal_from_json(
            &json!({"ts":"2024-03-01T15:04:00+01:00","kind":"edited","agent":"email",
                "situation":{"contact":"Marco Bertelli","entity":"email","segment":"client","amount":12500},
                "before":"Dear Marco; thanks for the order","after":"Dear Marco, thanks for the order"}),
            false,
        )
        .unwrap();
        assert_eq!(s.offset_min, 60);
        assert_eq!(s.situation.contact, "Marco Bertelli");
        assert_eq!(s.situation.number("amount"), Some(12500.0));
        assert!(s.features.is_some() && s.texts.is_none());
    }

    #[test]
    fn bad_signals_are_typed_errors() {
        let base = json!({"ts":"2024-03-01T15:04:00Z","kind":"deferred","agent":"email"});
        assert!(signal_from_json(&base, false).is_ok());
        let bad_cases = [
            json!({"ts":"2024-03-01T15:04:00Z","kind":"clicked","agent":"email"}),
            json!({"ts":"2024-03-01T15:04:00Z","kind":"edited","agent":"email"}),
            json!({"ts":"2024-03-01T15:04:00Z","kind":"corrected","agent":"email"}),
            json!({"ts":"yesterday","kind":"deferred","agent":"email"}),
            json!({"ts":"2024-03-01T15:04:00Z","kind":"deferred"}),
            json!({"ts":"2024-03-01T15:04:00Z","kind":"deferred","agent":"email","situation":{"a":{"b":1}}}),
            json!({"ts":"2024-03-01T15:04:00Z","kind":"deferred","agent":"email","situation":{"amount":1e300}}),
            json!({"ts":"2024-03-01T15:04:00Z","kind":"deferred","agent":"email","trust":3}),
            json!({"ts":"2024-03-01T15:04:00Z","kind":"edited","agent":"email","before":"x".repeat(MAX_TEXT + 1),"after":"y"}),
            json!([1, 2]),
        ];
        for b in bad_cases {
            assert_eq!(signal_from_json(&b, false).unwrap_err().code(), "INVALID_INPUT", "{b}");
        }
    }
}
