//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The workspace's root (the folder with `Cargo.lock`): these helpers serve the tests of the
/// root package and of the crates beside it (`crates/cli/tests` includes this file).
pub fn workspace() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors().find(|d| d.join("Cargo.lock").is_file()).unwrap_or(&here).to_path_buf()
}

/// The default model's directory: `$MNEMO_MODEL_DIR`, else `models/multilingual-e5-small-latin`
/// (what `tools/build-model` writes), else the shared reference copy beside the clone.
/// Panics with the command to run when none exists: these tests need the real model.
pub fn model_dir() -> PathBuf {
    let root = workspace();
    let candidates = [
        std::env::var_os("MNEMO_MODEL_DIR").map(PathBuf::from),
        Some(root.join("models/multilingual-e5-small-latin")),
        Some(root.join("../shared/models/multilingual-e5-small-latin")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("model.onnx").is_file() && d.join("tokenizer.json").is_file())
        .unwrap_or_else(|| {
            panic!("no model found: run `tools/build-model` (writes models/multilingual-e5-small-latin) or set MNEMO_MODEL_DIR")
        })
}

pub struct Case {
    pub text: String,
    pub ids: Vec<i64>,
    pub embedding: Vec<f32>,
}

pub fn reference_cases() -> Vec<Case> {
    let path = workspace().join("tests/fixtures/e5-small-latin-reference.json");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            text: c["text"].as_str().unwrap().to_string(),
            ids: c["ids"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect(),
            embedding: c["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect(),
        })
        .collect()
}

/// Splits a reference text into the role its prefix names and the bare text.
pub fn split_prefix(text: &str) -> (mnemo::Role, &str) {
    if let Some(t) = text.strip_prefix("query: ") {
        (mnemo::Role::Query, t)
    } else if let Some(t) = text.strip_prefix("passage: ") {
        (mnemo::Role::Passage, t)
    } else {
        panic!("reference text without prefix: {text:?}")
    }
}
pub mod hash_embed;

/// A seeded xorshift generator: every run of a randomised test is the same workload.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// One of `xs`.
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}
