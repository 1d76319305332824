//! `WasmEngine`'s erasure, export and repair methods (the rest is in `js_engine`).

use wasm_bindgen::prelude::*;

use mnemo_json::Json;

use super::js::js_error;
use super::js_engine::WasmEngine;

#[wasm_bindgen]
impl WasmEngine {
    /// Erases (`what` JSON: `{scope, subject?, id?}`) and returns the receipt (JSON). The host
    /// then writes the journal and, when `takeVacuum` says so, compacts its storage.
    pub fn erase(&mut self, ns: &str, what: &str, now: f64) -> Result<String, JsValue> {
        Json(&mut self.inner).erase(ns, what, now as i64).map_err(js_error)
    }

    /// Replaces episode `id`'s text (`correction` JSON: `{text, verdict?, vector?}`), with the
    /// erasure's cascade; returns the receipt (JSON).
    pub fn correct(
        &mut self,
        ns: &str,
        id: f64,
        correction: &str,
        now: f64,
    ) -> Result<String, JsValue> {
        Json(&mut self.inner).correct(ns, id as u64, correction, now as i64).map_err(js_error)
    }

    /// Queues an erasure for the nightly job; returns `{id}`.
    #[wasm_bindgen(js_name = requestErasure)]
    pub fn request_erasure(&mut self, ns: &str, what: &str, now: f64) -> Result<String, JsValue> {
        Json(&mut self.inner).request_erasure(ns, what, now as i64).map_err(js_error)
    }

    /// True once after an erasure asked the storage to drop deleted bytes.
    #[wasm_bindgen(js_name = takeVacuum)]
    pub fn take_vacuum(&mut self) -> bool {
        self.inner.store_mut().take_vacuum()
    }

    /// Everything held about `ns`, decoded (JSON; right of access).
    #[wasm_bindgen(js_name = exportReadable)]
    pub fn export_readable(&self, ns: &str, now: f64) -> Result<String, JsValue> {
        self.inner.export_json(ns, now as i64).map_err(js_error)
    }

    /// The namespace as an encrypted file; `random` holds 23 bytes from
    /// `crypto.getRandomValues`; `logN` is scrypt's cost (15 when undefined).
    #[wasm_bindgen(js_name = exportEncrypted)]
    pub fn export_encrypted(
        &self,
        ns: &str,
        passphrase: &str,
        random: &[u8],
        now: f64,
        log_n: Option<u8>,
    ) -> Result<Vec<u8>, JsValue> {
        Json(&self.inner)
            .export_encrypted(ns, passphrase, random, now as i64, log_n)
            .map_err(js_error)
    }

    /// Imports an encrypted export into the empty namespace `ns`; returns `{records, bytes}`.
    #[wasm_bindgen(js_name = importEncrypted)]
    pub fn import_encrypted(
        &mut self,
        ns: &str,
        passphrase: &str,
        file: &[u8],
    ) -> Result<String, JsValue> {
        Json(&mut self.inner).import_encrypted(ns, passphrase, file).map_err(js_error)
    }

    /// Re-embeds every episode with the attached embedder; returns `{reembedded}`.
    pub fn reembed(&mut self, ns: &str) -> Result<String, JsValue> {
        Json(&mut self.inner).reembed(ns).map_err(js_error)
    }

    /// Records that could not be read when `ns` was opened (JSON list).
    pub fn quarantined(&mut self, ns: &str) -> Result<String, JsValue> {
        Json(&mut self.inner).quarantined(ns).map_err(js_error)
    }
}
