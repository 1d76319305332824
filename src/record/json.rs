//! Episodes from JSON objects (the CLI's JSON Lines, the JS binding). Field names may be
//! snake_case or camelCase; unknown fields are ignored.
//!
//! `text` is required; the time is `createdAt` / `created_at` (ms, or an ISO-8601 string) or
//! `ts` (ISO-8601). Optional: `outcome` (success, failure, partial, unknown), `verdict`,
//! `agent`, `kind`, `tool`, `stage`, `errorClass`, `entityType` (or inside `situation`),
//! `source` (its first word, before any `:`, names the origin: `user`, `admin`, `agent`, `tool`,
//! `web`, `email`; anything else is unknown and untrusted), `origin` (the same, said apart: it
//! becomes the source when none is given and must agree with it otherwise), `trust`, `entities`, `tags`, `surprise`, `tier` (0–2), `refId`, and for a task
//! memory `expiresAt` (ms or ISO-8601) or `ttlMs` (from `createdAt`).

use serde_json::Value;

use super::{Episode, Origin};
use crate::error::{Error, Result};
use crate::time::parse_iso8601;

fn field<'a>(v: &'a Value, snake: &str) -> Option<&'a Value> {
    v.get(snake).or_else(|| {
        let camel: String = snake
            .split('_')
            .enumerate()
            .map(|(i, p)| if i == 0 { p.to_string() } else { p[..1].to_uppercase() + &p[1..] })
            .collect();
        v.get(camel)
    })
}

fn text(v: &Value, name: &str) -> Result<String> {
    match field(v, name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(Error::InvalidInput(format!("{name:?} must be a string, not {other}"))),
    }
}

fn list(v: &Value, name: &str) -> Result<Vec<String>> {
    match field(v, name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str().map(str::to_string).ok_or_else(|| {
                    Error::InvalidInput(format!("{name:?} must be a list of strings"))
                })
            })
            .collect(),
        Some(_) => Err(Error::InvalidInput(format!("{name:?} must be a list of strings"))),
    }
}

/// A time in ms: a number, or an ISO-8601 string.
pub fn time_from_json(v: &Value, name: &str) -> Result<i64> {
    match v {
        Value::Number(n) => n.as_i64().ok_or_else(|| {
            Error::InvalidInput(format!("{name:?} must be whole milliseconds, not {n}"))
        }),
        Value::String(s) => parse_iso8601(s),
        other => Err(Error::InvalidInput(format!(
            "{name:?} must be milliseconds or an ISO-8601 string, not {other}"
        ))),
    }
}

/// An episode from a JSON object (module docs).
pub fn episode_from_json(v: &Value) -> Result<Episode> {
    if !v.is_object() {
        return Err(Error::InvalidInput("an episode must be a JSON object".into()));
    }
    let body = text(v, "text")?;
    if body.is_empty() {
        return Err(Error::InvalidInput("an episode needs a non-empty \"text\"".into()));
    }
    let at = match (field(v, "created_at"), v.get("ts")) {
        (Some(t), _) => time_from_json(t, "createdAt")?,
        (None, Some(t)) => time_from_json(t, "ts")?,
        (None, None) => {
            return Err(Error::InvalidInput(
                "an episode needs \"createdAt\" (ms or ISO-8601) or \"ts\"".into(),
            ))
        }
    };
    let mut e = Episode::new(body, at);
    let situation = v.get("situation").unwrap_or(v);
    e.outcome = match text(v, "outcome")?.as_str() {
        "" => Default::default(),
        s => s.parse()?,
    };
    e.verdict = text(v, "verdict")?;
    e.agent = text(v, "agent")?;
    e.kind = text(v, "kind")?;
    e.ref_id = text(v, "ref_id")?;
    e.situation.tool = text(situation, "tool")?;
    e.situation.stage = text(situation, "stage")?;
    e.situation.error_class = text(situation, "error_class")?;
    e.situation.entity_type = text(situation, "entity_type")?;
    e.source = text(v, "source")?;
    if let Some(o) = field(v, "origin").filter(|o| !o.is_null()) {
        let origin: Origin = o
            .as_str()
            .ok_or_else(|| Error::InvalidInput(format!("\"origin\" must be a string, not {o}")))?
            .parse()?;
        let named = Origin::of_episode_source(&e.source);
        if e.source.is_empty() {
            e.source = origin.to_string();
        } else if named != origin {
            return Err(Error::InvalidInput(format!(
                "\"origin\" {origin} disagrees with \"source\" {:?} (which names {named}): \
                 give one, or make the source's first word the origin (\"{origin}:…\")",
                e.source
            )));
        }
    }
    e.entities = list(v, "entities")?;
    e.tags = list(v, "tags")?;
    e.surprise = field(v, "surprise").and_then(Value::as_bool).unwrap_or(false);
    if let Some(t) = field(v, "trust") {
        let t = t
            .as_f64()
            .filter(|t| (0.0..=1.0).contains(t))
            .ok_or_else(|| Error::InvalidInput("\"trust\" must be a number from 0 to 1".into()))?;
        e.trust = t as f32;
    }
    if let Some(t) = field(v, "expires_at") {
        e.expires_at = time_from_json(t, "expiresAt")?;
    } else if let Some(t) = field(v, "ttl_ms") {
        let ttl = t.as_i64().filter(|t| *t > 0).ok_or_else(|| {
            Error::InvalidInput("\"ttlMs\" must be a positive number of milliseconds".into())
        })?;
        e.expires_at = at.saturating_add(ttl);
    }
    if let Some(t) = field(v, "tier") {
        e.tier = t.as_u64().filter(|t| *t <= 2).ok_or_else(|| {
            Error::InvalidInput("\"tier\" must be 0 (raw), 1 (weekly) or 2 (monthly)".into())
        })? as u8;
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Outcome;
    use serde_json::json;

    #[test]
    fn both_spellings_and_typed_errors() {
        let e = episode_from_json(&json!({
            "text": "npm install failed", "ts": "2024-11-18", "outcome": "failure",
            "error_class": "lockfile", "entityType": "repo", "tags": ["ci"], "tier": 1
        }))
        .unwrap();
        assert_eq!(e.outcome, Outcome::Failure);
        assert_eq!(
            (e.situation.error_class.as_str(), e.situation.entity_type.as_str()),
            ("lockfile", "repo")
        );
        assert_eq!((e.tags.clone(), e.tier), (vec!["ci".to_string()], 1));
        let e = episode_from_json(&json!({"text": "x", "createdAt": 5})).unwrap();
        assert_eq!(e.created_at, 5);
        // An origin said apart becomes the source, or must agree with it.
        let e = episode_from_json(&json!({"text": "x", "createdAt": 5, "origin": "web"})).unwrap();
        assert_eq!(Origin::of_episode_source(&e.source), Origin::Web);
        let both = json!({"text": "x", "createdAt": 5, "origin": "tool", "source": "tool:git"});
        assert_eq!(episode_from_json(&both).unwrap().source, "tool:git");
        for bad in [
            json!({"text": "x"}),
            json!({"text": "", "createdAt": 1}),
            json!({"text": "x", "createdAt": 1, "tags": "ci"}),
            json!({"text": "x", "createdAt": 1, "outcome": "meh"}),
            json!({"text": "x", "createdAt": 1, "tier": 7}),
            json!({"text": "x", "createdAt": 1, "origin": "user", "source": "email:ana@x.org"}),
            json!({"text": "x", "createdAt": 1, "origin": "boss"}),
            json!({"text": "x", "createdAt": 1, "origin": 1}),
            json!([1]),
        ] {
            assert_eq!(episode_from_json(&bad).unwrap_err().code(), "INVALID_INPUT", "{bad}");
        }
    }
}
