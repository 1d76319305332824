//! [`BertEmbedder`]: any BERT-family ONNX encoder run by tract, with masked mean pooling.
//!
//! Works with every model that takes `input_ids`, `attention_mask` and optionally
//! `token_type_ids` (int64 `[batch, seq]`) and returns `last_hidden_state` `[batch, seq, dim]`:
//! multilingual-e5-small (the default), e5-base, e5-small-v2, bge, all-MiniLM…
//!
//! Loading happens in stages, each with its own error: tokenizer parse, ONNX parse, input and
//! output discovery, type analysis and decluttering. Layer norms and masked softmaxes are then
//! fused into one op each (`fuse.rs`). Optimised plans are made lazily per shape bucket (see
//! `plan.rs`).

use tract_onnx::prelude::*;

use super::cache::EmbeddingCache;
use super::plan::PlanCache;
use super::polarity::Polarity;
use super::tokenize::{TextTokenizer, Tokens};
use super::{Embedder, Embedding, Role};
use crate::error::{Error, ModelFile, Result};

/// How to run a BERT-family model.
#[derive(Debug, Clone)]
pub struct BertConfig {
    /// Human-readable model name; the model id is `name@` + a hash of both files.
    pub name: String,
    /// Prepended to every query (`"query: "` for E5, empty for most others).
    pub query_prefix: String,
    /// Prepended to everything stored (`"passage: "` for E5).
    pub passage_prefix: String,
    /// Token limit, special tokens included (512 for BERT-base position tables).
    pub max_tokens: usize,
    /// Texts per forward pass; larger calls are split.
    pub max_batch: usize,
    /// Padded tokens per forward pass (texts × the longest one's tokens); a call is split
    /// further so that no pass exceeds it, and a text longer than this runs alone. Activations
    /// grow with it (in wasm ~25 MB for each further 512-token text of a pass): the default,
    /// 1024, keeps the compiled Q4_0 model under 128 MB of wasm memory, and measured no slower
    /// per passage than 16 × 128 tokens.
    pub max_batch_tokens: usize,
    /// Embeddings remembered by content hash; 0 disables the cache.
    pub cache_capacity: usize,
    /// Optimise one plan per padded shape bucket instead of one plan with symbolic batch and
    /// sequence sizes. Off by default: with tract 0.23 on the default model the symbolic plan
    /// measured as fast (see BENCHMARKS.md), and every extra plan repacks the f32 weights.
    pub fixed_shapes: bool,
    /// Use the compact Unigram tokenizer when `tokenizer.json` has its shape (same ids, ~100 MB
    /// less for the default vocabulary). `false` forces Hugging Face `tokenizers`.
    pub compact_tokenizer: bool,
}

impl BertConfig {
    /// E5 settings: `query: ` / `passage: ` prefixes, 512 tokens.
    pub fn e5(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            query_prefix: "query: ".into(),
            passage_prefix: "passage: ".into(),
            max_tokens: 512,
            max_batch: 16,
            max_batch_tokens: 1024,
            cache_capacity: 4096,
            fixed_shapes: false,
            compact_tokenizer: true,
        }
    }

    /// Settings for models that take no prefix (MiniLM, most sentence-transformers).
    pub fn plain(name: impl Into<String>) -> Self {
        Self { query_prefix: String::new(), passage_prefix: String::new(), ..Self::e5(name) }
    }
}

/// Which model input an ONNX input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Input {
    Ids,
    Mask,
    TypeIds,
}

/// A BERT-family encoder run in-process by tract.
pub struct BertEmbedder {
    config: BertConfig,
    model_id: String,
    tokenizer: TextTokenizer,
    inputs: Vec<Input>,
    dim: usize,
    plans: PlanCache,
    cache: EmbeddingCache,
    fused: (usize, usize),
}

impl std::fmt::Debug for BertEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEmbedder")
            .field("model_id", &self.model_id)
            .field("dim", &self.dim)
            .field("plans", &self.plans.len())
            .finish()
    }
}

fn onnx_err(stage: &'static str) -> impl Fn(TractError) -> Error {
    move |e| Error::ModelLoad { file: ModelFile::Onnx, stage, detail: format!("{e:#}") }
}

impl BertEmbedder {
    /// Loads the model from the bytes of `model.onnx` and `tokenizer.json`.
    pub fn from_bytes(onnx: &[u8], tokenizer: &[u8], config: BertConfig) -> Result<Self> {
        Self::from_bytes_staged(onnx, tokenizer, config, &mut |_| {})
    }

    /// [`BertEmbedder::from_bytes`], calling `stage` with each stage's name as it ends —
    /// "model id" (SHA-256 of both files, or the CRC-32 check of the digest trailer
    /// `tools/build-model` appends; see `digest.rs`), "tokenizer", "parse", "type analysis",
    /// "declutter", "fuse" for `model.onnx`, or "read archive" for a compiled `model.nnef.tar`
    /// ([`BertEmbedder::compile`]) — so that a caller with a clock can break the load down (the
    /// engine keeps none). `onnx` may be either file: an archive is told by its tar header.
    pub fn from_bytes_staged(
        onnx: &[u8],
        tokenizer: &[u8],
        config: BertConfig,
        stage: &mut dyn FnMut(&'static str),
    ) -> Result<Self> {
        if config.max_batch == 0 {
            return Err(Error::InvalidInput("max_batch must be at least 1".into()));
        }
        // `MNEMO_ISA` holds tract to its level before tract first probes the CPU.
        super::isa::apply().map_err(Error::InvalidInput)?;
        let digest = super::digest::model_digest(onnx, tokenizer);
        let model_id = format!("{}@{}", config.name, &digest.sha256_hex[..12]);
        let onnx = digest.onnx;
        stage("model id");
        let tokenizer = if config.compact_tokenizer {
            TextTokenizer::from_bytes(tokenizer, config.max_tokens)?
        } else {
            TextTokenizer::from_bytes_hf(tokenizer, config.max_tokens)?
        };
        stage("tokenizer");

        let (mut base, inputs, batch, seq) = if super::nnef::is_archive(onnx) {
            let model = super::nnef::read(onnx).map_err(onnx_err("reading the NNEF archive"))?;
            stage("read archive");
            let inputs = discover_inputs(&model)?;
            let (batch, seq) = typed_batch_and_seq(&model)?;
            (model, inputs, batch, seq)
        } else {
            decluttered_onnx(onnx, stage)?
        };
        // Attention as one op where there is a vector path for it (`attention::available`);
        // done here at load rather than in `decluttered_onnx`, so that compiled archives never
        // hold it and any host can read them.
        if super::attention::available() {
            // An archive's graph comes back from NNEF with identity casts and reshapes around
            // each einsum, where the rewrite finds no attention chain. Natively a declutter
            // (~40 ms) restores it, and the fused op takes ~10% off each passage; in wasm the
            // declutter costs far more of the load and the fused op gains little, so there an
            // archive keeps its graph.
            if super::nnef::is_archive(onnx) && cfg!(not(target_arch = "wasm32")) {
                base.declutter().map_err(onnx_err("declutter"))?;
                stage("declutter");
            }
            super::attention::fuse_attention(&mut base).map_err(onnx_err("fusing attention"))?;
        }
        let dim = hidden_dim(&base)?;
        let fused = super::fused_ops::count(&base);
        let max_tokens = tokenizer.max_tokens();
        let cache = EmbeddingCache::new(config.cache_capacity);
        Ok(Self {
            model_id,
            tokenizer,
            inputs,
            dim,
            plans: PlanCache::new(base, batch, seq, max_tokens, config.fixed_shapes),
            cache,
            config,
            fused,
        })
    }

    /// Compiles `model.onnx` into the NNEF archive a load reads without parsing, analysing or
    /// decluttering (see `nnef.rs`), ending in a digest trailer that gives it the model id of
    /// the ONNX file: `mnemo compile-model` writes it as `model.nnef.tar`.
    pub fn compile(onnx: &[u8], tokenizer: &[u8]) -> Result<Vec<u8>> {
        let digest = super::digest::model_digest(onnx, tokenizer);
        if super::nnef::is_archive(digest.onnx) {
            return Err(Error::InvalidInput("this model is compiled already".into()));
        }
        let (base, ..) = decluttered_onnx(digest.onnx, &mut |_| {})?;
        let mut archive =
            super::nnef::write(&base).map_err(onnx_err("writing the NNEF archive"))?;
        let trailer = super::digest::trailer_for(&digest.sha256_hex, &archive, tokenizer);
        archive.extend_from_slice(&trailer);
        Ok(archive)
    }

    /// Loads `model.onnx` and `tokenizer.json` from a directory (native hosts).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_dir(dir: &std::path::Path, config: BertConfig) -> Result<Self> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| Error::Io {
                path: path.display().to_string(),
                detail: format!(
                    "{e}; build the default model with `tools/build-model` \
                                 or pass a directory holding model.onnx and tokenizer.json"
                ),
            })
        };
        Self::from_bytes(&read("model.onnx")?, &read("tokenizer.json")?, config)
    }

    /// Optimises the plans for these `(texts, tokens)` shapes now rather than on first use, so
    /// a host can do it at start-up (or in a worker) instead of during a user's request.
    pub fn warm_up(&mut self, shapes: &[(usize, usize)]) -> Result<()> {
        for &(n, len) in shapes {
            let shape = self.shape_for(n.min(self.config.max_batch).max(1), len.max(1));
            self.plans.get(shape)?;
        }
        Ok(())
    }

    /// How many layer norms and masked softmaxes run as one fused op each (see `fuse.rs`);
    /// `(0, 0)` for a graph whose chains did not match, which then runs unfused.
    pub fn fused_ops(&self) -> (usize, usize) {
        self.fused
    }

    /// How many optimised plans are held.
    pub fn plan_count(&self) -> usize {
        self.plans.len()
    }

    /// The matrix kernels of the plans optimised so far (tract's names: `avx512_mmm_f32_32x12`,
    /// `fma_mmm_f32_…`): which instruction set the linear layers run on, for a test or a report
    /// (`MNEMO_ISA` in `isa` changes them).
    pub fn matmul_kernels(&self) -> Vec<String> {
        self.plans.matmul_kernels()
    }

    /// True when `tokenizer.json` runs on the compact Unigram tokenizer (a few MB) rather than
    /// Hugging Face `tokenizers` (~100 MB for the default vocabulary).
    pub fn compact_tokenizer(&self) -> bool {
        self.tokenizer.is_compact()
    }

    /// How many embeddings were answered from the content-hash cache.
    pub fn cache_hits(&self) -> u64 {
        self.cache.hits()
    }

    /// The configuration in use.
    pub fn config(&self) -> &BertConfig {
        &self.config
    }

    /// Token ids the model sees for `text` in `role` (prefix and special tokens included).
    pub fn token_ids(&self, text: &str, role: Role) -> Result<Vec<i64>> {
        Ok(self.tokenizer.encode(&self.prefixed(text, role))?.ids)
    }

    fn prefixed(&self, text: &str, role: Role) -> String {
        let prefix = match role {
            Role::Query => &self.config.query_prefix,
            Role::Passage => &self.config.passage_prefix,
        };
        format!("{prefix}{text}")
    }

    /// The padded shape a batch of `n` texts of at most `len` tokens runs at, or `None` when
    /// the symbolic plan runs it unpadded.
    fn shape_for(&self, n: usize, len: usize) -> Option<(usize, usize)> {
        self.config.fixed_shapes.then(|| self.plans.bucket(n, len))
    }

    /// Runs one forward pass over at most `max_batch` tokenised texts.
    fn run_batch(&mut self, toks: &[Tokens]) -> Result<Vec<Vec<f32>>> {
        let n = toks.len();
        let len = toks.iter().map(|t| t.ids.len()).max().unwrap_or(1);
        let shape = self.shape_for(n, len);
        let (b, s) = shape.unwrap_or((n, len));
        let plan = self.plans.get(shape)?;
        let mut ids = vec![0i64; b * s];
        let mut mask = vec![0i64; b * s];
        let mut types = vec![0i64; b * s];
        for (row, t) in toks.iter().enumerate() {
            let at = row * s;
            ids[at..at + t.ids.len()].copy_from_slice(&t.ids);
            types[at..at + t.type_ids.len()].copy_from_slice(&t.type_ids);
            mask[at..at + t.ids.len()].iter_mut().for_each(|m| *m = 1);
        }
        for row in n..b {
            mask[row * s] = 1; // padding rows: one visible token keeps softmax finite
        }
        let tensor = |data: &[i64]| -> Result<TValue> {
            Tensor::from_shape(&[b, s], data).map(TValue::from).map_err(|e| Error::Inference {
                stage: "building inputs",
                detail: format!("{e:#}"),
            })
        };
        let mut feed = TVec::new();
        for input in &self.inputs {
            feed.push(match input {
                Input::Ids => tensor(&ids)?,
                Input::Mask => tensor(&mask)?,
                Input::TypeIds => tensor(&types)?,
            });
        }
        let out = plan.run(feed).map_err(|e| Error::Inference {
            stage: "running the model",
            detail: format!("{e:#}"),
        })?;
        let hidden = out[0].to_plain_array_view::<f32>().map_err(|e| Error::Inference {
            stage: "reading last_hidden_state",
            detail: format!("{e:#}"),
        })?;
        let hidden = hidden.into_shape_with_order((b, s, self.dim)).map_err(|e| {
            Error::Inference { stage: "reading last_hidden_state", detail: e.to_string() }
        })?;
        Ok((0..n)
            .map(|row| {
                let count = toks[row].ids.len();
                let mut v = vec![0f32; self.dim];
                for pos in 0..count {
                    for (acc, x) in v.iter_mut().zip(hidden.slice(tract_ndarray::s![row, pos, ..]))
                    {
                        *acc += x;
                    }
                }
                normalise(&mut v);
                v
            })
            .collect())
    }
}

impl Embedder for BertEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn max_tokens(&self) -> usize {
        self.tokenizer.max_tokens()
    }

    fn truncates(&mut self, text: &str, role: Role) -> Option<bool> {
        self.tokenizer.encode(&self.prefixed(text, role)).ok().map(|t| t.truncated)
    }

    fn embed(&mut self, texts: &[&str], role: Role) -> Result<Vec<Embedding>> {
        if let Some(i) = texts.iter().position(|t| t.trim().is_empty()) {
            return Err(Error::InvalidInput(format!(
                "text {i} is empty: there is nothing to embed, skip it instead"
            )));
        }
        let mut out: Vec<Option<Embedding>> = vec![None; texts.len()];
        let mut todo: Vec<(usize, EmbeddingKeyed)> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let key = EmbeddingCache::key(role, text);
            match self.cache.get(&key) {
                Some(hit) => out[i] = Some(hit),
                None => {
                    let tokens = self.tokenizer.encode(&self.prefixed(text, role))?;
                    todo.push((i, EmbeddingKeyed { key, tokens, polarity: Polarity::of(text) }));
                }
            }
        }
        // Sort by length so each batch pads little, then restore order through the indices.
        todo.sort_by_key(|(_, k)| k.tokens.ids.len());
        let lens: Vec<usize> = todo.iter().map(|(_, k)| k.tokens.ids.len()).collect();
        for range in batches(&lens, self.config.max_batch, self.config.max_batch_tokens) {
            let chunk = &todo[range];
            let toks: Vec<Tokens> = chunk.iter().map(|(_, k)| k.tokens.clone()).collect();
            let vectors = self.run_batch(&toks)?;
            for ((i, keyed), vector) in chunk.iter().zip(vectors) {
                let e = Embedding {
                    vector,
                    polarity: keyed.polarity,
                    tokens: keyed.tokens.ids.len(),
                    truncated: keyed.tokens.truncated,
                };
                self.cache.insert(keyed.key, e.clone());
                out[*i] = Some(e);
            }
        }
        Ok(out.into_iter().map(|e| e.expect("every text was embedded or cached")).collect())
    }
}

/// Splits texts sorted by ascending token count into forward passes of at most `max_batch`
/// texts and `max_tokens` padded tokens (texts × the last, longest one's count). A text over
/// the token budget gets a pass of its own.
fn batches(
    sorted_lens: &[usize],
    max_batch: usize,
    max_tokens: usize,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &len) in sorted_lens.iter().enumerate() {
        let n = i - start + 1;
        if n > 1 && (n > max_batch || n.saturating_mul(len) > max_tokens) {
            out.push(start..i);
            start = i;
        }
    }
    if start < sorted_lens.len() {
        out.push(start..sorted_lens.len());
    }
    out
}

struct EmbeddingKeyed {
    key: super::cache::Key,
    tokens: Tokens,
    polarity: Polarity,
}

fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
}

/// Parses an ONNX model and makes the decluttered, fused graph with symbolic `[batch, seq]`
/// inputs, naming each stage as it ends: "parse", "type analysis", "declutter", "fuse".
pub(super) fn decluttered_onnx(
    onnx: &[u8],
    stage: &mut dyn FnMut(&'static str),
) -> Result<(TypedModel, Vec<Input>, Symbol, Symbol)> {
    // `model_for_read` copies the file into one buffer and decodes from it as `Bytes`, so each
    // tensor's bytes are copied once more. Decoding `ModelProto` straight from `onnx` (a `&[u8]`)
    // was tried: natively 14 ms faster, but prost then copies each tensor twice (to `Bytes`,
    // then to its `Vec`), and in wasm the load's heap peak grew from 140 to 166 MB
    // (`model.q4.onnx`).
    let mut model = tract_onnx::onnx().model_for_read(&mut &onnx[..]).map_err(onnx_err("parse"))?;
    stage("parse");
    let inputs = discover_inputs(&model)?;
    let (batch, seq) = batch_and_seq_symbols(&model)?;
    for ix in 0..inputs.len() {
        let fact = InferenceFact::dt_shape(i64::datum_type(), tvec![batch.to_dim(), seq.to_dim()]);
        model.set_input_fact(ix, fact).map_err(onnx_err("inputs"))?;
    }
    select_hidden_state(&mut model)?;
    // Weights stored as int8 blocks become f32 constants in one pass each, instead of through
    // tract's op-by-op constant folding (see `dequant.rs`); their dead ops are then dropped.
    let folded =
        super::dequant::fold_int8_dequant(&mut model).map_err(onnx_err("type analysis"))?;
    if folded > 0 {
        model = model.into_compact().map_err(onnx_err("type analysis"))?;
    }
    let typed = model.into_typed().map_err(onnx_err("type analysis"))?;
    stage("type analysis");
    let mut base = typed.into_decluttered().map_err(onnx_err("declutter"))?;
    stage("declutter");
    super::fuse::fuse(&mut base).map_err(onnx_err("fusing layer norms and softmaxes"))?;
    stage("fuse");
    Ok((base, inputs, batch, seq))
}

/// The batch and sequence symbols of a typed model's first input (`[batch, seq]`).
fn typed_batch_and_seq(model: &TypedModel) -> Result<(Symbol, Symbol)> {
    let fact = model.input_fact(0).map_err(onnx_err("inputs"))?;
    let sym = |ix: usize| match fact.shape.get(ix) {
        Some(TDim::Sym(s)) => Some(s.clone()),
        _ => None,
    };
    match (fact.rank(), sym(0), sym(1)) {
        (2, Some(b), Some(s)) => Ok((b, s)),
        _ => Err(Error::ModelLoad {
            file: ModelFile::Onnx,
            stage: "inputs",
            detail: format!("the first input is {:?}; expected [batch, seq]", fact.shape),
        }),
    }
}

/// The exporter's own batch and sequence symbols when the first input declares them (other
/// facts in the graph may name them), else fresh `B` and `S`.
fn batch_and_seq_symbols(model: &InferenceModel) -> Result<(Symbol, Symbol)> {
    let fact = model.input_fact(0).map_err(onnx_err("inputs"))?;
    let declared: Vec<Option<Symbol>> = fact
        .shape
        .dims()
        .map(|d| match d {
            tract_onnx::tract_hir::infer::GenericFactoid::Only(TDim::Sym(s)) => Some(s.clone()),
            _ => None,
        })
        .collect();
    let pick = |ix: usize, name: &str| {
        declared.get(ix).cloned().flatten().unwrap_or_else(|| model.symbols.sym(name))
    };
    Ok((pick(0, "B"), pick(1, "S")))
}

/// Which model input each graph input is, by name, in an ONNX graph or a compiled one.
fn discover_inputs<F, O>(model: &Graph<F, O>) -> Result<Vec<Input>>
where
    F: Fact + Clone + 'static,
    O: std::fmt::Debug + std::fmt::Display + AsRef<dyn Op> + AsMut<dyn Op> + Clone + 'static,
{
    let mut inputs = Vec::new();
    for outlet in model.input_outlets().map_err(onnx_err("inputs"))? {
        let name = model.node(outlet.node).name.as_str();
        inputs.push(match name {
            "input_ids" => Input::Ids,
            "attention_mask" => Input::Mask,
            "token_type_ids" => Input::TypeIds,
            other => {
                return Err(Error::ModelLoad {
                    file: ModelFile::Onnx,
                    stage: "inputs",
                    detail: format!(
                        "unexpected input `{other}`; expected input_ids, attention_mask, token_type_ids"
                    ),
                })
            }
        });
    }
    for needed in [Input::Ids, Input::Mask] {
        if !inputs.contains(&needed) {
            return Err(Error::ModelLoad {
                file: ModelFile::Onnx,
                stage: "inputs",
                detail: format!(
                    "missing input {needed:?} (input_ids and attention_mask are required)"
                ),
            });
        }
    }
    Ok(inputs)
}

/// Keeps only `last_hidden_state` (or the first output) as the graph's output, so pooling
/// heads the export may carry are pruned away.
fn select_hidden_state(model: &mut InferenceModel) -> Result<()> {
    let outputs = model.output_outlets().map_err(onnx_err("outputs"))?.to_vec();
    let chosen = outputs
        .iter()
        .find(|o| {
            model.outlet_label(**o) == Some("last_hidden_state")
                || model.node(o.node).name == "last_hidden_state"
        })
        .or(outputs.first())
        .copied()
        .ok_or_else(|| Error::ModelLoad {
            file: ModelFile::Onnx,
            stage: "outputs",
            detail: "the graph has no output".into(),
        })?;
    model.select_output_outlets(&[chosen]).map_err(onnx_err("outputs"))
}

fn hidden_dim(model: &TypedModel) -> Result<usize> {
    let fact = model.output_fact(0).map_err(onnx_err("outputs"))?;
    let shape = &fact.shape;
    let bad =
        |what: String| Error::ModelLoad { file: ModelFile::Onnx, stage: "outputs", detail: what };
    if shape.rank() != 3 || fact.datum_type != f32::datum_type() {
        return Err(bad(format!(
            "output is {:?} {shape:?}; expected f32 last_hidden_state [batch, seq, dim]",
            fact.datum_type
        )));
    }
    shape[2]
        .as_i64()
        .and_then(|d| usize::try_from(d).ok())
        .ok_or_else(|| bad(format!("hidden dimension {} is not a fixed number", shape[2])))
}

#[cfg(test)]
mod tests {
    use super::batches;

    #[test]
    fn passes_respect_both_the_text_and_the_padded_token_limits() {
        // 16 short texts fit one pass; the 17th starts another.
        assert_eq!(batches(&[32; 17], 16, 1024), vec![0..16, 16..17]);
        // 4 texts padded to 300 tokens would be 1,200: three per pass.
        assert_eq!(batches(&[10, 20, 300, 300, 300], 16, 1024), vec![0..3, 3..5]);
        // Padding counts at the longest text's length.
        assert_eq!(batches(&[8, 8, 8, 600], 16, 1024), vec![0..3, 3..4]);
        // A text over the budget runs alone, as does every text with no budget at all.
        assert_eq!(batches(&[2000, 2000], 16, 1024), vec![0..1, 1..2]);
        assert_eq!(batches(&[5, 5], 16, 0), vec![0..1, 1..2]);
        assert!(batches(&[], 16, 1024).is_empty());
        // Every text lands in exactly one pass, in order.
        let lens: Vec<usize> = (1..200).map(|i| i * 3 % 517).collect::<Vec<_>>();
        let mut sorted = lens.clone();
        sorted.sort();
        let ranges = batches(&sorted, 16, 1024);
        assert_eq!(ranges.first().unwrap().start, 0);
        assert_eq!(ranges.last().unwrap().end, sorted.len());
        for w in ranges.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        for r in &ranges {
            let n = r.len();
            assert!(n <= 16 && (n == 1 || n * sorted[r.end - 1] <= 1024), "{r:?}");
        }
    }
}
