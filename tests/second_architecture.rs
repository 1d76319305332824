//! A second, independently exported BERT-family model: all-MiniLM-L6-v2 (6 layers, WordPiece
//! tokenizer, token_type_ids, no prefixes), as exported from PyTorch with int8 weights by a
//! third party. Fetched by `tools/fetch-minilm`; references computed by onnxruntime.

use std::path::PathBuf;

use mnemo::embed::cosine;
use mnemo::{Embedder, Role};
use mnemo_embed::{BertConfig, BertEmbedder};

fn minilm_dir() -> PathBuf {
    let dir = std::env::var_os("MNEMO_MINILM_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/all-minilm-l6-v2")
    });
    assert!(dir.join("model.onnx").is_file(), "no MiniLM model: run `tools/fetch-minilm`");
    dir
}

#[test]
fn minilm_matches_onnxruntime() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm-reference.json");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut e =
        BertEmbedder::from_dir(&minilm_dir(), BertConfig::plain("all-minilm-l6-v2")).unwrap();
    assert_eq!(e.dim(), 384);
    // an export the project did not write: its 13 layer norms and 6 softmaxes fuse too
    assert_eq!(e.fused_ops(), (13, 6));
    assert!(!e.compact_tokenizer(), "WordPiece goes through Hugging Face tokenizers");
    assert_eq!(e.max_tokens(), 128, "the tokenizer's own truncation (128) wins over 512");
    let cases = json["cases"].as_array().unwrap();
    let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
    let batched = e.embed(&texts, Role::Passage).unwrap();
    for (case, got) in cases.iter().zip(&batched) {
        let text = case["text"].as_str().unwrap();
        let ids: Vec<i64> =
            case["ids"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
        assert_eq!(e.token_ids(text, Role::Passage).unwrap(), ids, "ids of {text:?}");
        let want: Vec<f32> = case["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let c = cosine(&got.vector, &want);
        assert!(c >= 0.9999, "cosine {c} for {text:?}");
    }
    // no prefix: query and passage embed alike
    let q = e.embed(&["dark mode"], Role::Query).unwrap();
    let p = e.embed(&["dark mode"], Role::Passage).unwrap();
    assert!(cosine(&q[0].vector, &p[0].vector) > 0.99999);
}
