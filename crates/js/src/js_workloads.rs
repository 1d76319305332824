//! The benchmark workloads (crate `mnemo-bench`) for JS: the wasm build with the `workloads` feature
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

/// How an answer crosses into JS, per answer in ms (medians over alternating rounds): recall
/// (k = 10) and context answers as JSON text parsed by `JSON.parse` (what the package does)
/// against serde-wasm-bindgen building the same objects from the typed answers. The engine
/// work itself is done once per query, outside the timing. Returns the report as JSON text.
#[wasm_bindgen(js_name = benchCrossing)]
pub fn bench_crossing(
    n: u32,
    queries: u32,
    rounds: u32,
    clock: &js_sys::Function,
) -> Result<String, JsValue> {
    use mnemo::engine::{ContextRequest, Query};
    let now = || clock.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let mut setup = mnemo_bench::context_setup(n as usize, queries as usize);
    let err = |e: mnemo::Error| JsValue::from_str(&e.to_string());
    let (mut recalls, mut contexts) = (Vec::new(), Vec::new());
    for (text, vector) in setup.texts.iter().zip(&setup.vectors) {
        let mut q = Query::new(text.clone(), 10);
        q.vector = Some(vector.clone());
        q.touch = false;
        recalls.push(setup.engine.recall("bench", &q, setup.now).map_err(err)?);
        let mut req = ContextRequest::new(text.clone());
        req.vector = Some(vector.clone());
        contexts.push(setup.engine.context("bench", &req, setup.now).map_err(err)?);
    }
    let swb = serde_wasm_bindgen::Serializer::json_compatible();
    let to_js = |v: &dyn erased::Out| v.to_js(&swb);
    let mut rows: [Vec<f64>; 4] = Default::default();
    let mut sink = 0usize; // keeps the parsed objects from being optimised away
    for _ in 0..rounds {
        let t = now();
        for r in &recalls {
            let text = mnemo_json::recall_answer(r).map_err(err)?;
            sink += usize::from(js_sys::JSON::parse(&text)?.is_object());
        }
        rows[0].push((now() - t) / recalls.len() as f64);
        let t = now();
        for r in &recalls {
            sink += usize::from(to_js(&mnemo_json::RecallAnswer::of(r))?.is_object());
        }
        rows[1].push((now() - t) / recalls.len() as f64);
        let t = now();
        for c in &contexts {
            let text = serde_json::to_string(c).map_err(|e| JsValue::from_str(&e.to_string()))?;
            sink += usize::from(js_sys::JSON::parse(&text)?.is_object());
        }
        rows[2].push((now() - t) / contexts.len() as f64);
        let t = now();
        for c in &contexts {
            sink += usize::from(to_js(c)?.is_object());
        }
        rows[3].push((now() - t) / contexts.len() as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let [a, b, c, d] = &mut rows;
    let report = serde_json::json!({
        "episodes": n, "queries": queries, "rounds": rounds, "objects": sink,
        "recall_json_parse_ms": median(a), "recall_serde_wasm_bindgen_ms": median(b),
        "context_json_parse_ms": median(c), "context_serde_wasm_bindgen_ms": median(d),
    });
    Ok(report.to_string())
}

/// The answers the crossing benchmark converts, behind one object-safe trait.
mod erased {
    use serde::Serialize;
    use wasm_bindgen::JsValue;

    /// Something serde-wasm-bindgen can turn into a JS value.
    pub trait Out {
        fn to_js(&self, s: &serde_wasm_bindgen::Serializer) -> Result<JsValue, JsValue>;
    }

    impl<T: Serialize> Out for T {
        fn to_js(&self, s: &serde_wasm_bindgen::Serializer) -> Result<JsValue, JsValue> {
            self.serialize(s).map_err(JsValue::from)
        }
    }
}
