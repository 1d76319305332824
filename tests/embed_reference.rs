//! The tract embedder against onnxruntime's reference embeddings, on the real default model.

mod common;

use common::{model_dir, reference_cases, split_prefix};
use mnemo::embed::{cosine, polarity, Stance};
use mnemo::{Embedder, Polarity, Role};
use mnemo_embed::{BertConfig, BertEmbedder};

fn load(fixed: bool) -> BertEmbedder {
    let config =
        BertConfig { fixed_shapes: fixed, ..BertConfig::e5("multilingual-e5-small-latin") };
    BertEmbedder::from_dir(&model_dir(), config).expect("default model loads")
}

#[test]
fn token_ids_match_the_reference_tokenizer() {
    let e = load(true);
    for case in reference_cases() {
        let (role, text) = split_prefix(&case.text);
        assert_eq!(e.token_ids(text, role).unwrap(), case.ids, "ids of {:?}", case.text);
    }
}

#[test]
fn embeddings_match_onnxruntime_one_by_one_and_batched() {
    let cases = reference_cases();
    for fixed in [true, false] {
        let mut e = load(fixed);
        // 12 layers: 25 layer norms (embeddings, 2 per layer) and 12 masked softmaxes fused
        assert_eq!(e.fused_ops(), (25, 12), "the fused layer norm and softmax ran");
        // one by one
        for case in &cases {
            let (role, text) = split_prefix(&case.text);
            let got = e.embed(&[text], role).unwrap().remove(0);
            let c = cosine(&got.vector, &case.embedding);
            assert!(c >= 0.9999, "fixed={fixed} cosine {c} for {:?}", case.text);
            assert_eq!(got.tokens, case.ids.len());
            assert!(!got.truncated);
        }
        // batched, mixed lengths, through a fresh embedder so the cache cannot answer
        let mut e = load(fixed);
        let passages: Vec<&common::Case> =
            cases.iter().filter(|c| c.text.starts_with("passage: ")).collect();
        let texts: Vec<&str> = passages.iter().map(|c| split_prefix(&c.text).1).collect();
        let got = e.embed(&texts, Role::Passage).unwrap();
        for (g, case) in got.iter().zip(&passages) {
            let c = cosine(&g.vector, &case.embedding);
            assert!(c >= 0.9999, "batched fixed={fixed} cosine {c} for {:?}", case.text);
            let norm: f32 = g.vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        }
    }
}

#[test]
fn prefixes_are_added_and_matter() {
    let mut e = load(true);
    let q = e.embed(&["how much protein should a female eat"], Role::Query).unwrap();
    let p = e.embed(&["how much protein should a female eat"], Role::Passage).unwrap();
    assert!(cosine(&q[0].vector, &p[0].vector) < 0.999, "query and passage prefixes must differ");
    assert_eq!(e.token_ids("x", Role::Query).unwrap()[1..4], [40, 1077, 12]); // ▁query :
}

#[test]
fn cache_answers_repeats_without_running_the_model() {
    let mut e = load(true);
    let a = e.embed(&["the same text"], Role::Passage).unwrap();
    let b = e.embed(&["the same text", "the same text"], Role::Passage).unwrap();
    assert_eq!(e.cache_hits(), 2);
    assert_eq!(a[0], b[0]);
    assert_eq!(b[0], b[1]);
}

#[test]
fn long_texts_are_truncated_and_say_so() {
    let mut e = load(true);
    let long = "memory ".repeat(2000);
    let got = e.embed(&[&long], Role::Passage).unwrap().remove(0);
    assert!(got.truncated);
    assert_eq!(got.tokens, e.max_tokens());
    assert_eq!(got.tokens, 512);
}

#[test]
fn empty_text_is_a_typed_error() {
    let mut e = load(true);
    let err = e.embed(&["ok", "  "], Role::Passage).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
}

#[test]
fn model_id_names_the_model_and_its_files() {
    let e = load(true);
    assert!(e.model_id().starts_with("multilingual-e5-small-latin@"), "{}", e.model_id());
    assert_eq!(e.dim(), 384);
    assert!(e.compact_tokenizer(), "the default tokenizer.json takes the compact path");
}

/// `tools/build-model` appends the model id's hash to both model files, so a load checks two
/// CRC-32s instead of hashing ~50 MB; the id is the one the bytes hash to all the same.
#[test]
fn the_built_files_carry_their_digest_and_keep_their_id() {
    use mnemo_embed::digest::{model_digest, sha256_hex, TRAILER_LEN};
    let dir = model_dir();
    let tok = std::fs::read(dir.join("tokenizer.json")).unwrap();
    for file in ["model.onnx", "model.q4.onnx"] {
        let onnx = std::fs::read(dir.join(file)).unwrap();
        let d = model_digest(&onnx, &tok);
        assert!(d.from_trailer, "{file} has no digest trailer: rebuild it with tools/build-model");
        let body = &onnx[..onnx.len() - TRAILER_LEN];
        assert_eq!(d.sha256_hex, sha256_hex(body, &tok), "{file}: the stored hash is the real one");
        // the same model without its trailer loads under the same id
        let config = || BertConfig::e5("e5");
        let with = BertEmbedder::from_bytes(&onnx, &tok, config()).unwrap();
        let without = BertEmbedder::from_bytes(body, &tok, config()).unwrap();
        assert_eq!(with.model_id(), without.model_id());
        assert_eq!(with.model_id(), format!("e5@{}", &d.sha256_hex[..12]));
    }
}

/// The model compiled to NNEF (typed, decluttered and fused at build time) loads under the
/// ONNX file's model id and embeds as it does.
#[test]
fn the_compiled_model_loads_under_the_same_id_and_matches() {
    let dir = model_dir();
    let tok = std::fs::read(dir.join("tokenizer.json")).unwrap();
    let onnx = std::fs::read(dir.join("model.onnx")).unwrap();
    let archive = BertEmbedder::compile(&onnx, &tok).expect("compiles");
    let mut stages = Vec::new();
    let config = BertConfig::e5("multilingual-e5-small-latin");
    let mut e = BertEmbedder::from_bytes_staged(&archive, &tok, config, &mut |s| stages.push(s))
        .expect("the archive loads");
    // No parse, no type analysis; a declutter only where attention is fused at load (natively
    // on x86_64), which needs it after NNEF.
    assert_eq!(stages[..3], ["model id", "tokenizer", "read archive"], "no parse, analysis");
    assert!(stages.len() == 3 || stages[3..] == ["declutter"], "stages {stages:?}");
    assert_eq!(e.model_id(), load(false).model_id());
    assert_eq!(e.fused_ops(), (25, 12));
    for case in reference_cases() {
        let (role, text) = split_prefix(&case.text);
        let c = cosine(&e.embed(&[text], role).unwrap()[0].vector, &case.embedding);
        assert!(c >= 0.9999, "compiled model: cosine {c} for {:?}", case.text);
    }
    assert_eq!(BertEmbedder::compile(&onnx, &tok).unwrap(), archive, "compiling is deterministic");
    let err = BertEmbedder::compile(&archive, &tok).unwrap_err();
    assert!(err.to_string().contains("compiled already"), "{err}");
    let mut damaged = archive.clone();
    damaged.truncate(archive.len() / 2);
    assert!(BertEmbedder::from_bytes(&damaged, &tok, BertConfig::e5("x")).is_err());
}

#[test]
fn bad_model_bytes_name_the_file() {
    let tok = std::fs::read(model_dir().join("tokenizer.json")).unwrap();
    let err = BertEmbedder::from_bytes(b"not onnx", &tok, BertConfig::e5("x")).unwrap_err();
    assert!(err.to_string().contains("model.onnx"), "{err}");
    let onnx = std::fs::read(model_dir().join("model.onnx")).unwrap();
    // cut inside a weight: the protobuf decoder itself must refuse it, without a panic
    let err =
        BertEmbedder::from_bytes(&onnx[..onnx.len() / 2], &tok, BertConfig::e5("x")).unwrap_err();
    assert!(err.to_string().contains("model.onnx"), "{err}");
    let err = BertEmbedder::from_bytes(&onnx, b"{}", BertConfig::e5("x")).unwrap_err();
    assert!(err.to_string().contains("tokenizer.json"), "{err}");
}

/// The model alone cannot separate a rule from its opposite; polarity can.
#[test]
fn rules_are_kept_apart_from_their_opposites() {
    let mut e = load(true);
    let pairs: &[(&str, &str, Stance)] = &[
        ("Never use semicolons", "Use semicolons", Stance::Opposite),
        ("Never use semicolons", "Do not use semicolons", Stance::Same),
        ("Always reply in a formal tone", "Never reply in a formal tone", Stance::Opposite),
        ("Non usare mai il punto e virgola", "Usa il punto e virgola", Stance::Opposite),
        ("Verwende keine Semikolons", "Verwende Semikolons", Stance::Opposite),
        ("N'utilise jamais de points-virgules", "Utilise des points-virgules", Stance::Opposite),
        ("Nunca uses punto y coma", "Usa punto y coma", Stance::Opposite),
        ("Nunca use ponto e vírgula", "Use ponto e vírgula", Stance::Opposite),
        ("Never use semicolons", "The deploy failed on Friday", Stance::Unrelated),
    ];
    for (a, b, want) in pairs {
        let v = e.embed(&[a, b], Role::Passage).unwrap();
        let c = cosine(&v[0].vector, &v[1].vector);
        let got = polarity::stance(c, v[0].polarity, v[1].polarity, polarity::DEFAULT_SAME_TOPIC);
        assert_eq!(
            got, *want,
            "{a:?} vs {b:?} (cosine {c:.3}, {:?} vs {:?})",
            v[0].polarity, v[1].polarity
        );
    }
    let v = e.embed(&["Never use semicolons"], Role::Passage).unwrap();
    assert_eq!(v[0].polarity, Polarity::Negated);
}

/// `model.q4.onnx` (every weight 4-bit in memory, for memory-capped hosts) gives the same
/// embeddings as `model.onnx`.
#[test]
fn q4_model_file_matches_onnxruntime_too() {
    let dir = model_dir();
    let onnx = std::fs::read(dir.join("model.q4.onnx")).expect(
        "model.q4.onnx missing: run `tools/build-model` (the shared copy has only model.onnx)",
    );
    let tok = std::fs::read(dir.join("tokenizer.json")).unwrap();
    let mut e = BertEmbedder::from_bytes(&onnx, &tok, BertConfig::e5("e5-q4")).unwrap();
    let cases = reference_cases();
    for case in &cases {
        let (role, text) = split_prefix(&case.text);
        let got = e.embed(&[text], role).unwrap().remove(0);
        let c = cosine(&got.vector, &case.embedding);
        assert!(c >= 0.9999, "q4 cosine {c} for {:?}", case.text);
    }
}

/// `MNEMO_ISA` (mnemo_embed::isa) holds every fast path to its level: tract's matrix kernels
/// and the fused attention's path, read from what the embedder reports and the op's own
/// counter. tools/test runs this file under each level; unset, it checks the best path ran.
#[test]
fn the_isa_switch_holds_every_path_to_its_level() {
    use mnemo_embed::isa::{cap, Level};
    use mnemo_embed::{attention_runs, AttentionPath};
    let paths = [AttentionPath::Portable, AttentionPath::Avx2, AttentionPath::Avx512];
    let before = paths.map(attention_runs);
    let mut e = load(false);
    e.embed(&["how do I reset the cache?"], Role::Query).unwrap();
    let kernels = e.matmul_kernels();
    let ran: Vec<AttentionPath> = paths
        .into_iter()
        .zip(before)
        .filter(|(p, b)| attention_runs(*p) > *b)
        .map(|p| p.0)
        .collect();
    eprintln!("MNEMO_ISA {:?}: kernels {kernels:?}, attention {ran:?}", cap());
    assert!(!kernels.is_empty(), "the plan has matrix kernels");
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let level = cap();
    if level < Level::Avx512 {
        assert!(kernels.iter().all(|k| !k.contains("avx512")), "{kernels:?}");
        assert!(!ran.contains(&AttentionPath::Avx512), "{ran:?}");
    }
    if level < Level::Avx2 {
        let vex = |k: &String| k.starts_with("fma") || k.starts_with("avx");
        assert!(!kernels.iter().any(vex), "{kernels:?}");
        assert!(!ran.contains(&AttentionPath::Avx2), "{ran:?}");
    }
    let cpu_avx512 = std::arch::is_x86_feature_detected!("avx512f");
    let cpu_avx2 =
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    if level == Level::Avx512 && cpu_avx512 {
        assert!(ran.contains(&AttentionPath::Avx512), "the AVX-512 attention ran: {ran:?}");
        assert!(kernels.iter().any(|k| k.contains("avx512")), "{kernels:?}");
    } else if level >= Level::Avx2 && cpu_avx2 {
        assert!(ran.contains(&AttentionPath::Avx2), "the AVX2 attention ran: {ran:?}");
    }
}
