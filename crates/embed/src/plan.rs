//! Shape-specialised tract plans.
//!
//! The embedder keeps the decluttered graph with symbolic `B` × `S` inputs. By default it
//! optimises one plan from it that runs every shape. With `BertConfig::fixed_shapes` it instead
//! optimises one plan per padded *bucket*, lazily, the first time a batch of that shape is seen;
//! inputs are padded up to their bucket and the attention mask keeps padding out of every real
//! token's result. Earlier tract versions ran fixed shapes 20–50 % faster; with tract 0.23 on
//! this model the two measured alike, while each bucket's plan repacks the weights (memory), so
//! buckets are opt-in. `benches/embed.rs --symbolic` measures both.

use std::collections::HashMap;
use std::sync::Arc;

use tract_onnx::prelude::*;

use crate::error::{Error, ModelFile, Result};

/// Sequence-length buckets (tokens, special tokens included). Texts are padded up to the first
/// bucket that holds them; the model's own limit is always the last bucket.
const SEQ_BUCKETS: &[usize] = &[8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512];

/// Batch buckets. A larger batch runs at its own size.
const BATCH_BUCKETS: &[usize] = &[1, 2, 4, 8, 16];

pub(crate) type Plan = Arc<TypedRunnableModel>;

/// The decluttered graph with symbolic inputs, and the plans optimised from it so far.
///
/// Without fixed shapes only the one symbolic plan is ever made, so the graph is dropped once
/// it is: its f32 weights would otherwise stay in memory next to the plan's packed copy
/// (~85 MB for the default model).
pub(crate) struct PlanCache {
    base: Option<TypedModel>,
    fixed_shapes: bool,
    batch: Symbol,
    seq: Symbol,
    max_tokens: usize,
    plans: HashMap<(usize, usize), Plan>,
}

impl PlanCache {
    pub fn new(
        base: TypedModel,
        batch: Symbol,
        seq: Symbol,
        max_tokens: usize,
        fixed_shapes: bool,
    ) -> Self {
        Self { base: Some(base), fixed_shapes, batch, seq, max_tokens, plans: HashMap::new() }
    }

    /// The padded `(batch, seq)` shape used for `n` texts whose longest has `len` tokens.
    pub fn bucket(&self, n: usize, len: usize) -> (usize, usize) {
        let b = BATCH_BUCKETS.iter().copied().find(|&b| b >= n).unwrap_or(n);
        let s = SEQ_BUCKETS
            .iter()
            .copied()
            .find(|&s| s >= len && s <= self.max_tokens)
            .unwrap_or(self.max_tokens);
        (b, s.max(len))
    }

    /// Number of plans optimised so far.
    pub fn len(&self) -> usize {
        self.plans.len()
    }

    /// The matrix kernels the plans optimised so far run (tract's names, sorted, once each).
    pub fn matmul_kernels(&self) -> Vec<String> {
        use tract_onnx::tract_core::ops::matmul::optimized::OptMatMul;
        let mut names: Vec<String> = self
            .plans
            .values()
            .flat_map(|p| p.model().nodes.iter())
            .filter_map(|n| n.op_as::<OptMatMul>())
            .flat_map(|m| m.mmm.iter().map(|k| k.name().to_string()))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The plan for exactly this `(batch, seq)` shape, or the symbolic plan for `None`,
    /// optimising it on first use.
    pub fn get(&mut self, shape: Option<(usize, usize)>) -> Result<Plan> {
        let key = shape.unwrap_or((0, 0));
        if let Some(p) = self.plans.get(&key) {
            return Ok(p.clone());
        }
        // Without fixed shapes the graph is handed to the optimiser, not copied, so its f32
        // weights are freed as they are packed.
        let base = if self.fixed_shapes { self.base.clone() } else { self.base.take() };
        let plan = self.optimise(base, shape)?;
        self.plans.insert(key, plan.clone());
        Ok(plan)
    }

    fn optimise(&self, base: Option<TypedModel>, shape: Option<(usize, usize)>) -> Result<Plan> {
        let err = |stage, e: TractError| Error::ModelLoad {
            file: ModelFile::Onnx,
            stage,
            detail: format!("{e:#}"),
        };
        let base = base.ok_or_else(|| Error::ModelLoad {
            file: ModelFile::Onnx,
            stage: "optimising",
            detail: "the graph was dropped after its one symbolic plan was made; \
                     load the model with fixed_shapes to optimise per-shape plans"
                .into(),
        })?;
        let mut model = match shape {
            Some((batch, seq)) => {
                let mut values = HashMap::new();
                values.insert(self.batch.clone(), TDim::Val(batch as i64));
                values.insert(self.seq.clone(), TDim::Val(seq as i64));
                base.set_symbols(&values).map_err(|e| err("fixing shapes", e))?
            }
            None => base,
        };
        // The base graph is decluttered already: by the ONNX load (`decluttered_onnx`) or by
        // the compile step that wrote the NNEF archive. Decluttering it again made no
        // difference to speed and cost ~100 ms natively (~0.6 s in wasm) of a compiled
        // archive's first embedding, so the symbolic plan goes straight to code generation.
        // Fixed shapes are decluttered once more: with every dimension known, shape arithmetic
        // folds away.
        if shape.is_some() {
            model.declutter().map_err(|e| err("optimising", e))?;
        }
        model.optimize().map_err(|e| err("optimising", e))?;
        model.into_runnable().map_err(|e| err("planning", e))
    }
}
