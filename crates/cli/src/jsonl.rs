//! The JSON Lines files `mnemo bench` reads (items and queries), shared with `mnemo-host`.

/// One line of a `mnemo bench` items or queries file.
pub struct Line {
    /// `id` (items) or `qid` (queries).
    pub id: String,
    /// Namespace.
    pub ns: String,
    /// Time (ms).
    pub ts: i64,
    /// Text.
    pub text: String,
}

/// Reads a `mnemo bench` JSON Lines file (`{id|qid, ns, ts, text, …}`); a malformed line is
/// an error naming its number.
pub fn read_jsonl(path: &std::path::Path, id_field: &str) -> Result<Vec<Line>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in std::io::BufRead::lines(std::io::BufReader::new(file)).enumerate() {
        let at = || format!("{} line {}", path.display(), n + 1);
        let line = line.map_err(|e| format!("{}: {e}", at()))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("{}: not JSON: {e}", at()))?;
        let field = |name: &str| -> Result<String, String> {
            match v.get(name) {
                Some(serde_json::Value::String(s)) => Ok(s.clone()),
                Some(serde_json::Value::Number(x)) if name == id_field => Ok(x.to_string()),
                Some(_) => Err(format!("{}: field {name:?} must be a string", at())),
                None => Err(format!("{}: field {name:?} is missing", at())),
            }
        };
        let text = field("text")?;
        if text.trim().is_empty() {
            return Err(format!("{}: field \"text\" is empty", at()));
        }
        let ts = mnemo::time::parse_iso8601(&field("ts")?).map_err(|e| format!("{}: {e}", at()))?;
        out.push(Line { id: field(id_field)?, ns: field("ns")?, ts, text });
    }
    Ok(out)
}
