//! The options every command of `mnemo` and `mnemo-host` takes, before or after the command's
//! name: the store, the namespace, the model, the time to act at, JSON output.

use std::path::PathBuf;

use clap::Args;

/// Options every command takes, before or after the command's name.
#[derive(Args, Debug)]
pub struct Globals {
    /// Directory of the memory store (created when missing)
    #[arg(long, global = true, value_name = "DIR", default_value = "mnemo-store")]
    pub store: PathBuf,
    /// Namespace to work in: one user's or one agent's memories, kept apart from the others
    #[arg(long, global = true, value_name = "NAME", default_value = "default")]
    pub ns: String,
    /// Embedding model directory (model.onnx + tokenizer.json) [default: $MNEMO_MODEL_DIR, else
    /// models/multilingual-e5-small-latin]
    #[arg(long, global = true, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Act as if it were this time instead of now (ISO-8601: 2024-03-05 or
    /// 2024-03-05T14:30:00Z)
    #[arg(long, global = true, value_name = "ISO-8601", value_parser = mnemo::time::parse_iso8601)]
    pub at: Option<i64>,
    /// Print the result as one JSON document on stdout instead of text
    #[arg(long, global = true)]
    pub json: bool,
}

impl Globals {
    /// `--model`, else `$MNEMO_MODEL_DIR`, else the default model's directory.
    pub fn model_dir(&self) -> PathBuf {
        self.model.clone().unwrap_or_else(|| {
            std::env::var_os("MNEMO_MODEL_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("models/multilingual-e5-small-latin"))
        })
    }

    /// `--at`, else the clock (ms since the Unix epoch).
    pub fn now(&self) -> i64 {
        now_or(self.at)
    }
}

/// `at`, else the clock (ms since the Unix epoch).
pub fn now_or(at: Option<i64>) -> i64 {
    at.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    })
}
