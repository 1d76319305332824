//! Erasure, export and repair commands, shared by `mnemo` and `mnemo-host` (compiled into both
//! with `#[path]`, like `learn.rs`): each tool implements [`Calls`] over its engine.
//!
//! Passphrases come from `--passphrase-file` (its first line) or the `MNEMO_PASSPHRASE`
//! environment variable, never from the command line (where other users of the machine could
//! read it in the process list).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::json;

use crate::globals::Globals;

/// The engine calls these commands need.
pub trait Calls {
    /// `erase_json`.
    fn erase(&mut self, ns: &str, what: &str, now: i64) -> Result<String, String>;
    /// `correct_json`.
    fn correct(&mut self, ns: &str, id: u64, correction: &str, now: i64) -> Result<String, String>;
    /// `request_erasure_json`.
    fn request_erasure(&mut self, ns: &str, what: &str, now: i64) -> Result<String, String>;
    /// `export_json` (the readable export).
    fn export_readable(&mut self, ns: &str, now: i64) -> Result<String, String>;
    /// The encrypted export, written to `out` (streamed where the engine is in-process).
    #[allow(clippy::too_many_arguments)]
    fn export_encrypted(
        &mut self,
        ns: &str,
        passphrase: &str,
        random: &[u8],
        log_n: u8,
        now: i64,
        out: &mut dyn Write,
    ) -> Result<(), String>;
    /// `import_encrypted_json`.
    fn import_encrypted(
        &mut self,
        ns: &str,
        passphrase: &str,
        file: &[u8],
    ) -> Result<String, String>;
    /// `reembed_json`.
    fn reembed(&mut self, ns: &str) -> Result<String, String>;
    /// `quarantined_json`.
    fn quarantined(&mut self, ns: &str) -> Result<String, String>;
}

/// The privacy and repair commands.
#[derive(Subcommand, Debug)]
pub enum Privacy {
    /// Erase the whole namespace (--ns), one subject in it (--subject), or one memory (--id):
    /// every layer, vacuumed, verified; prints the receipt as JSON
    Forget {
        /// Every record that names this person, contact or identifier, however it is written
        /// (case, accents, spaces, quotes, possessives)
        #[arg(long, value_name = "NAME", conflicts_with_all = ["id", "all"])]
        subject: Option<String>,
        /// A linked identifier erased with the subject (an email address, an IBAN…);
        /// repeatable
        #[arg(long, value_name = "VALUE", requires = "subject")]
        also: Vec<String>,
        /// One episode and what derives from it
        #[arg(long, conflicts_with = "all")]
        id: Option<u64>,
        /// Everything held for this namespace (the user)
        #[arg(long)]
        all: bool,
        /// Print the receipt of what would go (counts per layer, episode ids) and change
        /// nothing
        #[arg(long, conflicts_with = "queue")]
        dry_run: bool,
        /// Erase a subject even when it is in more than half of the episodes
        #[arg(long, requires = "subject")]
        force: bool,
        /// Queue the request for the nightly job instead of erasing now
        #[arg(long)]
        queue: bool,
    },
    /// Correct one memory: episode ID's text replaced by TEXT under the same id, what derived
    /// from the wrong version erased, the old text vacuumed away; prints the receipt as JSON
    Correct {
        /// The episode
        id: u64,
        /// The right text
        text: String,
        /// The right verdict, when it changes too
        #[arg(long)]
        verdict: Option<String>,
    },
    /// Export the namespace to FILE: encrypted (AES-256-GCM, key from scrypt of the
    /// passphrase), or readable JSON with --readable
    Export {
        /// Where to write it
        file: PathBuf,
        /// Everything held about the namespace as readable JSON (right of access), unencrypted
        #[arg(long)]
        readable: bool,
        /// Read the passphrase from this file's first line (else $MNEMO_PASSPHRASE)
        #[arg(long, value_name = "FILE")]
        passphrase_file: Option<PathBuf>,
        /// scrypt cost: 2^N iterations (15 uses 32 MiB)
        #[arg(long, value_name = "N", default_value_t = 15,
            value_parser = clap::value_parser!(u8).range(10..=22))]
        scrypt_log_n: u8,
    },
    /// Import an encrypted export into the namespace (which must be empty); nothing is imported
    /// unless every byte of the file authenticates
    Import {
        /// The exported file
        file: PathBuf,
        /// Read the passphrase from this file's first line (else $MNEMO_PASSPHRASE)
        #[arg(long, value_name = "FILE")]
        passphrase_file: Option<PathBuf>,
    },
    /// Re-embed every episode with the current model (after a model change)
    Reembed,
    /// List the records that could not be read when the namespace was opened
    Quarantined,
}

fn passphrase(file: &Option<PathBuf>) -> Result<String, String> {
    let p = match file {
        Some(f) => std::fs::read_to_string(f)
            .map_err(|e| format!("{}: {e}", f.display()))?
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
        None => std::env::var("MNEMO_PASSPHRASE").map_err(|_| {
            "give the passphrase with --passphrase-file FILE or $MNEMO_PASSPHRASE".to_string()
        })?,
    };
    if p.is_empty() {
        return Err("the passphrase is empty".into());
    }
    Ok(p)
}

/// Writes `path` through a temporary file beside it (`.NAME.mnemo-partial-PID`, created
/// exclusively and owner-only, so it is never a user's file or a planted link), renamed over
/// `path` once complete and synced: the export is 0600 on Unix, like the store.
fn write_file(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) -> Result<(), String> {
    let name = path.file_name().ok_or_else(|| format!("{}: not a file name", path.display()))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".mnemo-partial-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let file = mnemo::store::file::create_private(&tmp)
        .map_err(|e| format!("{}: create: {e}", tmp.display()))?;
    let written = (|| {
        let mut out = std::io::BufWriter::new(file);
        f(&mut out)?;
        let file = out.into_inner().map_err(|e| format!("{}: write: {e}", tmp.display()))?;
        file.sync_all().map_err(|e| format!("{}: fsync: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("{}: rename: {e}", path.display()))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Runs `c` against `calls`; prints JSON (every command's output is one JSON document).
pub fn run(g: &Globals, c: &Privacy, calls: &mut dyn Calls) -> Result<(), String> {
    let (ns, now) = (&g.ns, g.now());
    match c {
        Privacy::Forget { subject, also, id, all, dry_run, force, queue } => {
            let what = match (subject, id, all) {
                (Some(s), _, _) => {
                    json!({"scope": "subject", "subject": s, "also": also, "force": force,
                        "dryRun": dry_run})
                }
                (_, Some(id), _) => json!({"scope": "episode", "id": id, "dryRun": dry_run}),
                (_, _, true) => json!({"scope": "namespace", "dryRun": dry_run}),
                _ => {
                    return Err("say what to forget: --subject NAME, --id ID, or --all for \
                                everything held for this namespace"
                        .into())
                }
            }
            .to_string();
            let out = if *queue {
                calls.request_erasure(ns, &what, now)?
            } else {
                calls.erase(ns, &what, now)?
            };
            println!("{out}");
            let receipt: serde_json::Value = out.parse().unwrap_or_default();
            if let Some(why) = receipt.get("vacuumError").and_then(|v| v.as_str()) {
                return Err(format!(
                    "the erasure is committed (the receipt above), but the vacuum that removes \
                     its bytes from the store's files failed: {why}. Fix that (space, \
                     permissions); the next command finishes it"
                ));
            }
        }
        Privacy::Correct { id, text, verdict } => {
            let fix = json!({"text": text, "verdict": verdict}).to_string();
            println!("{}", calls.correct(ns, *id, &fix, now)?);
        }
        Privacy::Export { file, readable: true, .. } => {
            let doc = calls.export_readable(ns, now)?;
            write_file(file, |w| w.write_all(doc.as_bytes()).map_err(|e| e.to_string()))?;
            println!("{}", json!({"file": file, "bytes": doc.len(), "encrypted": false}));
        }
        Privacy::Export { file, passphrase_file, scrypt_log_n, .. } => {
            let pass = passphrase(passphrase_file)?;
            let mut random = [0u8; 23];
            getrandom_03::fill(&mut random).map_err(|e| format!("no OS randomness: {e}"))?;
            write_file(file, |w| {
                calls.export_encrypted(ns, &pass, &random, *scrypt_log_n, now, w)
            })?;
            let bytes = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
            println!("{}", json!({"file": file, "bytes": bytes, "encrypted": true}));
        }
        Privacy::Import { file, passphrase_file } => {
            let pass = passphrase(passphrase_file)?;
            let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
            println!("{}", calls.import_encrypted(ns, &pass, &bytes)?);
        }
        Privacy::Reembed => println!("{}", calls.reembed(ns)?),
        Privacy::Quarantined => println!("{}", calls.quarantined(ns)?),
    }
    Ok(())
}
