//! Host bindings. Nothing outside this folder knows about wasm-bindgen or wit-bindgen.

#[cfg(feature = "js")]
pub mod js;
#[cfg(all(
    feature = "js",
    target_arch = "wasm32",
    target_os = "unknown",
    not(target_feature = "atomics")
))]
mod js_alloc;
#[cfg(all(feature = "js", feature = "model"))]
pub mod js_embedder;
#[cfg(feature = "js")]
pub mod js_engine;
#[cfg(feature = "js")]
pub mod js_lazy;
#[cfg(feature = "js")]
pub mod js_privacy;
#[cfg(all(feature = "js", feature = "workloads"))]
pub mod js_workloads;
#[cfg(feature = "component")]
pub mod wit;
