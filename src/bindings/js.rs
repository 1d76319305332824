//! wasm-bindgen binding for JS hosts (browsers, extensions, Workers, Node).
//!
//! Errors become JS `Error`s whose `code` property is [`crate::Error::code`]. The embedder is
//! synchronous and CPU-bound: a page should run it in a Web Worker (see `pkg/`), never on its
//! main thread.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

pub(crate) fn js_error(e: crate::Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let _ = Reflect::set(&err, &"code".into(), &e.code().into());
    err.into()
}
/// Runs the store benchmark workload ([`crate::bench::store`]) in this wasm instance and returns
/// its report as a JSON string. `clock` is a function returning milliseconds
/// (`() => performance.now()`).
#[wasm_bindgen(js_name = benchStore)]
pub fn bench_store(n: usize, queries: usize, clock: &js_sys::Function) -> Result<String, JsValue> {
    let mut now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let report = crate::bench::store(n, queries, &mut now);
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Runs the nightly benchmark workload ([`crate::bench::nightly`]) in this wasm instance and
/// returns its report as a JSON string.
#[wasm_bindgen(js_name = benchNightly)]
pub fn bench_nightly(days: u32, per_day: u32, clock: &js_sys::Function) -> Result<String, JsValue> {
    let mut now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let report = crate::bench::nightly(days, per_day, &mut now);
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Runs the compaction benchmark workload ([`crate::bench::compaction`]) in this wasm instance
/// and returns its report as a JSON string.
#[wasm_bindgen(js_name = benchCompaction)]
pub fn bench_compaction(n: u32, clock: &js_sys::Function) -> Result<String, JsValue> {
    let mut now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let report = crate::bench::compaction(n as usize, &mut now);
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Runs the context benchmark workload ([`crate::bench::context`]) in this wasm instance and
/// returns its report as a JSON string.
#[wasm_bindgen(js_name = benchContext)]
pub fn bench_context(n: u32, queries: u32, clock: &js_sys::Function) -> Result<String, JsValue> {
    let mut now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let report = crate::bench::context(n as usize, queries as usize, &mut now);
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// The mail agent's seeded scenario (`learn::scenario`) as JSON: `{namespace, facts, factsAt,
/// days: [{day, episodes, signals, night}], incoming, incomingAt}`.
#[wasm_bindgen(js_name = demoScenario)]
pub fn demo_scenario(seed: u32, days: u32) -> Result<String, JsValue> {
    if !(1..=365).contains(&days) {
        return Err(js_error(crate::Error::InvalidInput("a scenario has 1 to 365 days".into())));
    }
    serde_json::to_string(&crate::learn::scenario::scenario(u64::from(seed), days))
        .map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Bytes of linear memory this wasm instance holds (it only grows).
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    crate::bench::memory_bytes() as f64
}
