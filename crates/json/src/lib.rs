//! mnemo's engine through JSON text: the shapes every surface shares (the JS package, the WIT
//! component, the CLIs' `--json`, MCP), camelCase fields, typed errors.
//!
//! [`Json`] is a view of an [`Engine`](mnemo::Engine): each operation takes its arguments as JSON text (or
//! plain values where a surface passes them so) and answers JSON text, the same for every
//! surface: `Json(&mut engine).recall(ns, r#"{"text": "lockfile"}"#, now, None)`.

use mnemo::error::{Error, Result};
use serde_json::Value;

mod context;
mod learning;
mod memory;
mod operations;
mod privacy;

pub use learning::{observation_json, observation_status, rule_json};
pub use memory::{config, recall_answer, status, RecallAnswer};
pub use operations::{Cli, Mcp, Operation, OPERATIONS};

/// The engine's operations in JSON (module docs), over a reference to an [`Engine`](mnemo::Engine):
/// `Json(&engine)` for the operations that only read, `Json(&mut engine)` for all of them.
pub struct Json<R>(pub R);

/// A value as a JSON tree whose `f32` numbers are the shortest decimals that read back as the
/// same `f32` (`0.8`, not the `0.800000011920929` of its widening to `f64`): it is serialized
/// to text, where serde writes an `f32` as such, and parsed back.
pub fn value(x: impl serde::Serialize) -> Value {
    serde_json::to_string(&x).ok().and_then(|t| t.parse().ok()).unwrap_or(Value::Null)
}

/// A value as JSON text.
pub(crate) fn out(v: impl serde::Serialize) -> Result<String> {
    serde_json::to_string(&v).map_err(|e| Error::InvalidInput(e.to_string()))
}

/// A tree as JSON text. `Value`'s own `Display` and `FromStr` are compiled once, in serde_json,
/// where `serde_json::to_string::<Value>` and `from_str::<Value>` would be compiled again in
/// each crate that calls them (release builds do not share generic code between crates).
pub(crate) fn out_tree(v: Value) -> Result<String> {
    Ok(v.to_string())
}

/// JSON text parsed, or an error naming `what` it should have been.
pub(crate) fn parse(text: &str, what: &str) -> Result<Value> {
    text.parse().map_err(|e| Error::InvalidInput(format!("{what} is not JSON: {e}")))
}

/// A string field.
pub(crate) fn str_of<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name).and_then(Value::as_str)
}

/// A list of strings field (empty when missing).
pub(crate) fn strings(v: &Value, name: &str) -> Vec<String> {
    v.get(name)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use mnemo::record::Episode;
    use mnemo::store::MemoryStore;
    use mnemo::{Config, Engine};

    use super::*;

    /// An f32 reads as its shortest text, not as its widening to f64.
    #[test]
    fn f32_values_print_as_their_shortest_text() {
        assert_eq!(value(0.8f32).to_string(), "0.8");
        assert_eq!(value([0.1f32, 1.0, 0.101_297_83]).to_string(), "[0.1,1.0,0.10129783]");
        assert_eq!(serde_json::json!(0.8f32).to_string(), "0.800000011920929", "the widening");
        // A recall's answer: scores, importance and explanations are f32 throughout.
        let mut engine = Engine::new(MemoryStore::new(), Config { dim: 2, ..Config::default() });
        let mut e = Episode::new("The invoice INV-7 was paid", 1_700_000_000_000);
        e.importance = 0.8;
        engine.remember("ana", e, Some(&[0.6, 0.8])).unwrap();
        let q = r#"{"text": "invoice INV-7", "k": 1}"#;
        let text = Json(&mut engine).recall("ana", q, 1_700_000_100_000, Some(vec![0.6, 0.8]));
        let text = text.unwrap();
        // An f32 needs at most 9 significant digits; its widening to f64 shows 15 to 17.
        let long = text.split(|c: char| !c.is_ascii_digit() && c != '.').filter(|t| {
            t.contains('.') && t.trim_start_matches(['0', '.']).replace('.', "").len() > 9
        });
        assert_eq!(long.collect::<Vec<_>>(), Vec::<&str>::new(), "{text}");
    }
}
