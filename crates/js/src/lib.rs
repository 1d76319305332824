//! mnemo's wasm-bindgen binding for JS hosts (browsers, extensions, Workers, Node): the wasm
//! builds of the npm package (`pkg/`). Errors become JS `Error`s with a `code`; objects cross
//! as JSON text (camelCase).
//!
//! Built for wasm32-unknown-unknown only (`tools/build-wasm`); on other targets it is empty.
#![cfg(target_arch = "wasm32")]

pub mod js;
#[cfg(all(target_arch = "wasm32", target_os = "unknown", not(target_feature = "atomics")))]
mod js_alloc;
#[cfg(feature = "model")]
pub mod js_embedder;
pub mod js_engine;
pub mod js_lazy;
pub mod js_privacy;
#[cfg(feature = "workloads")]
pub mod js_workloads;
