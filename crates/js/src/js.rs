//! wasm-bindgen binding for JS hosts (browsers, extensions, Workers, Node).
//!
//! Errors become JS `Error`s whose `code` property is [`mnemo::Error::code`]. The embedder is
//! synchronous and CPU-bound: a page should run it in a Web Worker (see `pkg/`), never on its
//! main thread.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

pub(crate) fn js_error(e: mnemo::Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let _ = Reflect::set(&err, &"code".into(), &e.code().into());
    err.into()
}

/// The mail agent's seeded scenario (`mnemo::demo::scenario`) as JSON: `{namespace, facts, factsAt,
/// days: [{day, episodes, signals, night}], incoming, incomingAt}`.
#[wasm_bindgen(js_name = demoScenario)]
pub fn demo_scenario(seed: u32, days: u32) -> Result<String, JsValue> {
    if !(1..=365).contains(&days) {
        return Err(js_error(mnemo::Error::InvalidInput("a scenario has 1 to 365 days".into())));
    }
    serde_json::to_string(&mnemo::demo::scenario::scenario(u64::from(seed), days))
        .map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Bytes of linear memory this wasm instance holds (it only grows).
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    return core::arch::wasm32::memory_size(0) as f64 * 65_536.0;
    #[cfg(not(target_arch = "wasm32"))]
    0.0
}
