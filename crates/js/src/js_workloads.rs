//! The benchmark workloads (`mnemo::bench`) for JS: the wasm build with the `workloads` feature
//! (`pkg/wasm-workloads`, made by tools/build-wasm) runs them under Node, so the wasm benches
//! and the native ones measure the same thing and the tests can compare their digests.

use wasm_bindgen::prelude::*;

/// Runs the store benchmark workload ([`mnemo_bench::store`]) in this wasm instance and returns
/// its report as a JSON string. `clock` is a function returning milliseconds
/// (`() => performance.now()`).
#[wasm_bindgen(js_name = benchStore)]
pub fn bench_store(n: usize, queries: usize, clock: &js_sys::Function) -> Result<String, JsValue> {
    let mut now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let report = mnemo_bench::store(n, queries, &mut now);
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Runs the nightly benchmark workload ([`mnemo_bench::nightly`]) in this wasm instance and
/// returns its report as a JSON string.
#[wasm_bindgen(js_name = benchNightly)]
pub fn bench_nightly(days: u32, per_day: u32, clock: &js_sys::Function) -> Result<String, JsValue> {
    let mut now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let report = mnemo_bench::nightly(days, per_day, &mut now);
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Runs the compaction benchmark workload ([`mnemo_bench::compaction`]) in this wasm instance
/// and returns its report as a JSON string.
#[wasm_bindgen(js_name = benchCompaction)]
pub fn bench_compaction(n: u32, clock: &js_sys::Function) -> Result<String, JsValue> {
    let mut now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let report = mnemo_bench::compaction(n as usize, &mut now);
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Runs the context benchmark workload ([`mnemo_bench::context`]) in this wasm instance and
/// returns its report as a JSON string.
#[wasm_bindgen(js_name = benchContext)]
pub fn bench_context(n: u32, queries: u32, clock: &js_sys::Function) -> Result<String, JsValue> {
    let mut now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let report = mnemo_bench::context(n as usize, queries as usize, &mut now);
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}
