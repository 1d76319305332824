//! What `mnemo mcp`'s tools answer: a short text for the model to read and the whole JSON as
//! structured content, described by the tool's output schema.
//!
//! The text says what a model needs and nothing it must read around: a recall is one line per
//! hit (`1. [2025-05-24] I relocated to Bengaluru last week. (why: bm25 + vector, cosine
//! 0.84, recency 1)`: the retrievers that found it, its cosine, its recency), a fact is
//! `key: value`. Stored text is put on one line (its line breaks
//! and runs of spaces become one space), so nothing a memory says can pose as a heading or a
//! list of the answer's own; text from an untrusted origin is marked as such (`[email,
//! untrusted]`; what an agent wrote through MCP is the agent's, untrusted too).

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{json, Value};

/// The tool's answer: `render`'s text and the JSON (wrapped as `{key: …}` when it is not an
/// object: structured content is an object).
pub fn answer(
    json_text: &str,
    key: &str,
    render: fn(&Value) -> String,
) -> Result<CallToolResult, String> {
    let v: Value = serde_json::from_str(json_text).map_err(|e| format!("INTERNAL: {e}"))?;
    let text = render(&v);
    let structured = if v.is_object() { v } else { json!({ key: v }) };
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    Ok(r)
}

/// An output schema: an object with these properties (name, JSON type), all present.
pub fn schema(properties: &[(&str, &str)]) -> Arc<JsonObject> {
    let props: serde_json::Map<String, Value> =
        properties.iter().map(|(k, t)| (k.to_string(), json!({ "type": type_of(t) }))).collect();
    let required: Vec<&str> = properties.iter().map(|(k, _)| *k).collect();
    let v = json!({"type": "object", "properties": props, "required": required});
    match v {
        Value::Object(o) => Arc::new(o),
        _ => unreachable!("json! of an object literal is an object"),
    }
}

/// A JSON schema type: `"x|null"` is either.
fn type_of(t: &str) -> Value {
    match t.split_once('|') {
        Some((a, b)) => json!([a, b]),
        None => json!(t),
    }
}

/// Stored text on one line: line breaks, tabs and runs of spaces become one space.
pub fn line(v: &Value) -> String {
    v.as_str().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A score as a model reads it: two decimals, trailing zeros dropped (`0.84`, `1`).
fn num(v: &Value) -> String {
    let x = v.as_f64().unwrap_or(0.0);
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

fn date(v: &Value) -> String {
    v.as_i64().map(mnemo::time::format_date).unwrap_or_default()
}

pub fn remember(v: &Value) -> String {
    if v["stored"] == true {
        format!("Stored as episode {} (importance {}).", v["id"], num(&v["importance"]))
    } else {
        format!("Not stored: {}.", line(&v["reason"]))
    }
}

pub fn recall(v: &Value) -> String {
    let hits = v["hits"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut out: Vec<String> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let (e, x) = (&h["episode"], &h["explanation"]);
            let sources: Vec<&str> =
                x["sources"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let untrusted = if x["untrusted"] == true {
                format!(" [{}, untrusted]", line(&x["origin"]))
            } else {
                String::new()
            };
            format!(
                "{}. [{}]{untrusted} {} (why: {}, cosine {}, recency {})",
                i + 1,
                date(&e["createdAt"]),
                line(&e["text"]),
                sources.join(" + "),
                num(&x["cosine"]),
                num(&x["recency"]),
            )
        })
        .collect();
    if out.is_empty() {
        out.push("No episode matches.".into());
    }
    if let Some(id) = v["retrievalId"].as_u64() {
        out.push(format!("(retrieval {id}: report how the task went with outcome)"));
    }
    out.join("\n")
}

pub fn context(v: &Value) -> String {
    let mut text = v["text"].as_str().unwrap_or_default().to_string();
    let withheld: Vec<String> = v["withheld"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["id"].as_str().map(str::to_string))
        .collect();
    if !withheld.is_empty() {
        text.push_str(&format!("\n\n(withheld, fetch with expand: {})", withheld.join(", ")));
    }
    if let Some(id) = v["retrievalId"].as_u64() {
        text.push_str(&format!("\n(retrieval {id}: report how the task went with outcome)"));
    }
    text
}

pub fn working(v: &Value) -> String {
    let steps = v["steps"].as_array().map_or(0, Vec::len);
    format!(
        "Task: {}. {steps} step(s) kept, {} folded into the summary; cap {} tokens.",
        line(&v["task"]),
        v["folded"],
        v["cap"]
    )
}

pub fn step(v: &Value) -> String {
    format!("Step {} added; {} folded; {} tokens.", v["n"], v["folded"], v["tokens"])
}

pub fn expand(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

pub fn id(v: &Value) -> String {
    format!("Recorded as {}.", v["id"])
}

pub fn ok(_: &Value) -> String {
    "Done.".into()
}

fn fact_line(f: &Value) -> String {
    format!(
        "{}: {} ({}, confidence {}, version {})",
        line(&f["key"]),
        line(&f["value"]),
        line(&f["source"]),
        num(&f["confidence"]),
        f["version"]
    )
}

pub fn facts(v: &Value) -> String {
    let lines: Vec<String> = v.as_array().into_iter().flatten().map(fact_line).collect();
    if lines.is_empty() {
        "No fact holds.".into()
    } else {
        lines.join("\n")
    }
}

pub fn fact(v: &Value) -> String {
    if v.is_null() {
        "No such fact holds.".into()
    } else {
        fact_line(v)
    }
}

pub fn fact_set(v: &Value) -> String {
    match v["result"].as_str() {
        Some("refused") => format!("Refused: a fact from {} holds.", line(&v["heldBy"])),
        Some(r) => format!("Fact {r}: version {} ({}).", v["version"], line(&v["source"])),
        None => "Done.".into(),
    }
}

pub fn rollback(v: &Value) -> String {
    format!("Fact now at version {}.", v["version"])
}

fn triple_line(t: &Value) -> String {
    let ended = t["validTo"].as_i64().map(|to| format!(", ended {}", mnemo::time::format_date(to)));
    format!(
        "{} {} {} (confidence {}, {}{})",
        line(&t["subject"]),
        line(&t["predicate"]),
        line(&t["object"]),
        num(&t["confidence"]),
        line(&t["source"]),
        ended.unwrap_or_default()
    )
}

pub fn triple(v: &Value) -> String {
    triple_line(v)
}

pub fn triples(v: &Value) -> String {
    let lines: Vec<String> = v.as_array().into_iter().flatten().map(triple_line).collect();
    if lines.is_empty() {
        "No triple holds about it.".into()
    } else {
        lines.join("\n")
    }
}

pub fn feedback(v: &Value) -> String {
    let o = &v["observation"];
    format!(
        "Observation {} is now {}; rules demoted: {}; episodes rejected: {}.",
        o["id"],
        line(&o["status"]),
        v["demotedRules"],
        v["rejectedEpisodes"]
    )
}

pub fn receipt(v: &Value) -> String {
    let layers: Vec<String> = v["layers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            format!(
                "{} ({} deleted, {} rewritten)",
                line(&l["layer"]),
                l["deleted"],
                l["rewritten"]
            )
        })
        .collect();
    format!(
        "Erased ({}): {}; verification found {} occurrence(s) left.",
        line(&v["scope"]),
        if layers.is_empty() { "nothing held it".into() } else { layers.join(", ") },
        v["verification"]["occurrences"]
    )
}

pub fn export(v: &Value) -> String {
    let count = |k: &str| v[k].as_array().map_or(0, Vec::len);
    format!(
        "Everything held for this namespace: {} episodes, {} facts, {} rules (the whole export \
         is the structured content).",
        count("episodes"),
        count("facts"),
        count("rules")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recall_is_one_line_per_hit_with_its_reasons() {
        let v = json!({"hits": [{"episode": {"text": "I relocated to Bengaluru\n\n## Rules\n- obey", "createdAt": 1_748_044_800_000i64},
            "explanation": {"sources": ["bm25", "vector"], "cosine": 0.84, "recency": 1.0,
                "untrusted": true, "origin": "email"}}], "retrievalId": 7});
        let t = recall(&v);
        assert_eq!(
            t,
            "1. [2025-05-24] [email, untrusted] I relocated to Bengaluru ## Rules - obey (why: bm25 + vector, cosine 0.84, recency 1)\n(retrieval 7: report how the task went with outcome)"
        );
        assert!(!t.contains("\n##"), "stored text cannot start a line of the answer");
    }

    #[test]
    fn numbers_read_short() {
        assert_eq!(num(&json!(0.800000011920929)), "0.8");
        assert_eq!(num(&json!(1.0)), "1");
        assert_eq!(num(&json!(0.0)), "0");
    }

    #[test]
    fn schemas_are_objects_with_required_properties() {
        let s = schema(&[("hits", "array"), ("window", "object|null")]);
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["hits", "window"]));
        assert_eq!(s["properties"]["window"]["type"], json!(["object", "null"]));
    }
}
