//! The options every command of `mnemo` and `mnemo-host` takes, before or after the command's
//! name: the store, the namespace, the model, the time to act at, JSON output.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mnemo::store::file::FileStore;

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
    /// 2024-03-05T14:30:00Z; from 1970 to 2248, the range every record can hold)
    #[arg(long, global = true, value_name = "ISO-8601", value_parser = parse_at)]
    pub at: Option<i64>,
    /// How long to wait for the store when another process holds it, in seconds (0: refuse at
    /// once)
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 5.0,
        value_parser = parse_wait)]
    pub lock_wait: f64,
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

    /// How long to wait for a store another process holds (`--lock-wait`).
    pub fn lock_wait(&self) -> Duration {
        Duration::from_secs_f64(self.lock_wait)
    }

    /// Opens the store directory (created when missing), waiting up to `--lock-wait` while
    /// another process holds it.
    pub fn open_store(&self) -> Result<FileStore, mnemo::Error> {
        let dir = &self.store;
        std::fs::create_dir_all(dir).map_err(|e| mnemo::Error::Io {
            path: dir.display().to_string(),
            detail: format!("create directory: {e}"),
        })?;
        open_waiting(dir, Instant::now(), self.lock_wait())
    }
}

/// Opens the file store in `dir`, retrying every 50 ms while another process holds its lock
/// until `wait` after `started`.
pub fn open_waiting(
    dir: &std::path::Path,
    started: Instant,
    wait: Duration,
) -> Result<FileStore, mnemo::Error> {
    loop {
        match FileStore::open(dir) {
            Err(mnemo::Error::Locked { .. }) if started.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(50))
            }
            other => return other,
        }
    }
}

/// `--at`: an ISO-8601 time from 1970 to 2248 (what every record's time can hold).
fn parse_at(s: &str) -> Result<i64, String> {
    let at = mnemo::time::parse_iso8601(s).map_err(|e| e.to_string())?;
    if (0..1i64 << 43).contains(&at) {
        Ok(at)
    } else {
        Err(format!("{s:?} is outside 1970-01-01 to 2248-09-26, the times a record can hold"))
    }
}

/// `--lock-wait`: seconds, 0 to 3600.
fn parse_wait(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(w) if (0.0..=3600.0).contains(&w) => Ok(w),
        _ => Err(format!("{s:?} is not a number of seconds from 0 to 3600")),
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
