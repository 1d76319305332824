//! JSON forms of erasure, export and repair, shared by the JS, WIT and CLI surfaces.

use std::ops::{Deref, DerefMut};

use mnemo::Engine;
use serde_json::json;

use mnemo::engine::{EraseOptions, Erasure, ExportOptions};

use crate::{out, out_tree, Json};
use mnemo::error::{Error, Result};
use mnemo::store::KvStore;

/// An erasure and its options from `{scope, subject?, id?, also?, force?, dryRun?}`.
fn what(json: &str) -> Result<(Erasure, EraseOptions)> {
    let v: serde_json::Value =
        json.parse().map_err(|e| Error::InvalidInput(format!("erasure is not JSON: {e}")))?;
    Ok((Erasure::from_json(&v)?, EraseOptions::from_json(&v)?))
}

impl<S: KvStore, R: Deref<Target = Engine<S>>> Json<R> {
    /// [`Engine::export_json`]: everything held for the namespace, readable (the right of
    /// access).
    pub fn export_readable(&self, ns: &str, now: i64) -> Result<String> {
        self.0.export_json(ns, now)
    }

    /// [`Engine::export_encrypted`] with 23 random bytes from the host (16 salt, 7 nonce) and
    /// scrypt's cost `log_n` (15 when `None`).
    pub fn export_encrypted(
        &self,
        ns: &str,
        passphrase: &str,
        random: &[u8],
        now: i64,
        log_n: Option<u8>,
    ) -> Result<Vec<u8>> {
        let mut options = ExportOptions::from_random(random, now)?;
        if let Some(n) = log_n {
            options.log_n = n;
        }
        self.0.export_encrypted_bytes(ns, passphrase, &options)
    }
}

impl<S: KvStore, R: DerefMut<Target = Engine<S>>> Json<R> {
    /// [`Engine::erase_with`] from `{scope: "namespace" | "subject" | "episode", subject?,
    /// id?, also?: [names or identifiers], force?, dryRun?}`; returns the receipt.
    pub fn erase(&mut self, ns: &str, erasure: &str, now: i64) -> Result<String> {
        let (what, options) = what(erasure)?;
        out(self.0.erase_with(ns, &what, &options, now)?)
    }

    /// [`Engine::correct`] from `{text, verdict?, vector?}`; returns the receipt.
    pub fn correct(&mut self, ns: &str, id: u64, correction: &str, now: i64) -> Result<String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Input {
            text: String,
            verdict: Option<String>,
            vector: Option<Vec<f32>>,
        }
        let c: Input = serde_json::from_str(correction).map_err(|e| {
            Error::InvalidInput(format!("a correction is {{text, verdict?, vector?}}: {e}"))
        })?;
        let fix = mnemo::engine::Correction { text: c.text, verdict: c.verdict };
        out(self.0.correct(ns, id, &fix, c.vector.as_deref(), now)?)
    }

    /// [`Engine::request_erasure`] from the same JSON; returns `{id}`.
    pub fn request_erasure(&mut self, ns: &str, erasure: &str, now: i64) -> Result<String> {
        let (what, options) = what(erasure)?;
        out_tree(json!({"id": self.0.request_erasure_with(ns, &what, &options, now)?}))
    }

    /// [`Engine::import_encrypted`]; returns `{records, bytes}`.
    pub fn import_encrypted(&mut self, ns: &str, passphrase: &str, file: &[u8]) -> Result<String> {
        out(self.0.import_encrypted(ns, passphrase, file)?)
    }

    /// [`Engine::reembed`]; returns `{reembedded}`.
    pub fn reembed(&mut self, ns: &str) -> Result<String> {
        out_tree(json!({"reembedded": self.0.reembed(ns)?}))
    }

    /// [`Engine::quarantined`] as a JSON list of `{key, episode, reason}`.
    pub fn quarantined(&mut self, ns: &str) -> Result<String> {
        out(self.0.quarantined(ns)?)
    }
}
