//! The MCP server's stdin and stdout, checked before the SDK reads them: newline-delimited
//! JSON-RPC, one message per line.
//!
//! - A line that is not JSON gets a JSON-RPC parse error (-32700, `id` null), as JSON-RPC 2.0
//!   asks; the SDK would drop it silently and leave the client waiting.
//! - A line over [`MAX_LINE`] bytes gets an invalid-request error (-32600) and is skipped.
//! - A `tools/call` whose argument is over [`MAX_ARGUMENT`] bytes (a string's UTF-8, or any other
//!   value's JSON) gets an invalid-params error (-32602) with the request's id, and never
//!   reaches a tool: nothing is stored.
//!
//! Every other line goes to the SDK unchanged. What the SDK writes and these errors go to
//! stdout whole lines at a time, through one writer, so they never interleave.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest tool argument the server takes (1 MiB): an episode's text is at most that.
pub const MAX_ARGUMENT: usize = 1 << 20;

/// The longest line read (several arguments of [`MAX_ARGUMENT`] and their JSON escapes).
pub const MAX_LINE: usize = 16 << 20;

/// The error a checked line gets instead of reaching the SDK, if any.
pub fn check_line(line: &[u8]) -> Option<Value> {
    let error = |id: Value, code: i64, message: String| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    if line.len() > MAX_LINE {
        return Some(error(
            Value::Null,
            -32600,
            format!("a message of {} bytes is over the {MAX_LINE}-byte limit", line.len()),
        ));
    }
    let v: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return Some(error(Value::Null, -32700, format!("parse error: {e}"))),
    };
    if v.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let arguments = v.pointer("/params/arguments").and_then(Value::as_object)?;
    for (name, a) in arguments {
        let size = match a {
            Value::String(s) => s.len(),
            other => other.to_string().len(),
        };
        if size > MAX_ARGUMENT {
            let id = v.get("id").cloned().unwrap_or(Value::Null);
            return Some(error(
                id,
                -32602,
                format!(
                    "argument \"{name}\" is {size} bytes, over the {MAX_ARGUMENT}-byte (1 MiB) \
                     limit: split it (an episode per section of a long document)"
                ),
            ));
        }
    }
    None
}

/// Reads lines of `input`, answers the bad ones on `out` and passes the rest to `sdk`.
async fn filter(
    input: impl AsyncRead + Unpin,
    mut sdk: impl AsyncWrite + Unpin,
    out: mpsc::UnboundedSender<Vec<u8>>,
) -> std::io::Result<()> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line longer than the limit is read up to it, answered, and the rest skipped.
        let n = (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await?;
        if n == 0 {
            return Ok(());
        }
        let ended = line.last() == Some(&b'\n');
        if !ended && line.len() > MAX_LINE {
            let mut rest = Vec::new();
            while !rest.ends_with(b"\n") {
                rest.clear();
                if (&mut input).take(1 << 16).read_until(b'\n', &mut rest).await? == 0 {
                    break;
                }
            }
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match check_line(body) {
            Some(error) => {
                let mut reply = error.to_string().into_bytes();
                reply.push(b'\n');
                if out.send(reply).is_err() {
                    return Ok(());
                }
            }
            None => {
                sdk.write_all(body).await?;
                sdk.write_all(b"\n").await?;
                sdk.flush().await?;
            }
        }
    }
}

/// Passes what the SDK writes to `out`, a whole line at a time.
async fn lines_of(sdk: impl AsyncRead + Unpin, out: mpsc::UnboundedSender<Vec<u8>>) {
    let mut sdk = BufReader::new(sdk);
    loop {
        let mut line = Vec::new();
        match sdk.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if out.send(line).is_err() {
                    return;
                }
            }
        }
    }
}

/// The SDK's ends of stdin and stdout, with the checks above between them and the process's
/// (the tasks run on the current runtime until stdin closes).
pub fn stdio() -> (tokio::io::DuplexStream, tokio::io::DuplexStream) {
    let (sdk_in, filter_out) = tokio::io::duplex(1 << 16);
    let (sdk_out, replies) = tokio::io::duplex(1 << 16);
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let errors = tx.clone();
    tokio::spawn(async move {
        if let Err(e) = filter(tokio::io::stdin(), filter_out, errors).await {
            eprintln!("mnemo mcp: reading stdin: {e}");
        }
    });
    tokio::spawn(lines_of(replies, tx));
    tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                return;
            }
        }
    });
    (sdk_in, sdk_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_get_their_json_rpc_errors() {
        let e = check_line(b"{\"jsonrpc\": \"2.0\", \"id\": 1,").unwrap();
        assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (Value::Null, json!(-32700)));
        assert_eq!(check_line(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"), None);
        let big = "x".repeat(MAX_ARGUMENT + 1);
        let call = |text: &str| {
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "remember", "arguments": {"text": text}}})
            .to_string()
        };
        let e = check_line(call(&big).as_bytes()).unwrap();
        assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (json!(7), json!(-32602)));
        assert_eq!(check_line(call(&big[1..]).as_bytes()), None, "exactly 1 MiB passes");
    }
}
