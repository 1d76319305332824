//! JSON forms of erasure, export and repair, shared by the JS, WIT and CLI surfaces.

use serde_json::json;

use super::{Engine, Erasure, ExportOptions};
use crate::error::{Error, Result};
use crate::store::KvStore;

fn what(json: &str) -> Result<Erasure> {
    let v: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| Error::InvalidInput(format!("erasure is not JSON: {e}")))?;
    Erasure::from_json(&v)
}

fn out(v: impl serde::Serialize) -> Result<String> {
    serde_json::to_string(&v).map_err(|e| Error::InvalidInput(e.to_string()))
}

impl<S: KvStore> Engine<S> {
    /// [`Engine::erase`] from `{scope: "namespace" | "subject" | "episode", subject?, id?}`;
    /// returns the receipt.
    pub fn erase_json(&mut self, ns: &str, erasure: &str, now: i64) -> Result<String> {
        out(self.erase(ns, &what(erasure)?, now)?)
    }

    /// [`Engine::correct`] from `{text, verdict?, vector?}`; returns the receipt.
    pub fn correct_json(
        &mut self,
        ns: &str,
        id: u64,
        correction: &str,
        now: i64,
    ) -> Result<String> {
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
        let fix = super::Correction { text: c.text, verdict: c.verdict };
        out(self.correct(ns, id, &fix, c.vector.as_deref(), now)?)
    }

    /// [`Engine::request_erasure`] from the same JSON; returns `{id}`.
    pub fn request_erasure_json(&mut self, ns: &str, erasure: &str, now: i64) -> Result<String> {
        out(json!({"id": self.request_erasure(ns, &what(erasure)?, now)?}))
    }

    /// [`Engine::export_encrypted`] with 23 random bytes from the host (16 salt, 7 nonce) and
    /// scrypt's cost `log_n` (15 when `None`).
    pub fn export_encrypted_with(
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
        self.export_encrypted_bytes(ns, passphrase, &options)
    }

    /// [`Engine::import_encrypted`]; returns `{records, bytes}`.
    pub fn import_encrypted_json(
        &mut self,
        ns: &str,
        passphrase: &str,
        file: &[u8],
    ) -> Result<String> {
        out(self.import_encrypted(ns, passphrase, file)?)
    }

    /// [`Engine::reembed`]; returns `{reembedded}`.
    pub fn reembed_json(&mut self, ns: &str) -> Result<String> {
        out(json!({"reembedded": self.reembed(ns)?}))
    }

    /// [`Engine::quarantined`] as a JSON list of `{key, episode, reason}`.
    pub fn quarantined_json(&mut self, ns: &str) -> Result<String> {
        out(self.quarantined(ns)?)
    }
}
