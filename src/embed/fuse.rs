//! Two fused operators for BERT-family encoders, put in place of the chains of small ops
//! tract's ONNX import leaves behind, and the rewrite that puts them there.
//!
//! After decluttering, tract runs each layer norm as six ops (sum, × 1/n, subtract the mean,
//! RMS-normalise, × γ, + β) and the attention mask as a broadcasting `Add` of a `[B, 1, 1, T]`
//! bias to the `[B, H, S, T]` scores ahead of the softmax. With one 32-token passage those ops
//! took 23% of a forward pass natively: each walks its tensor once (the broadcasting `Add`
//! one element at a time), and the small ones cost more in dispatch than in arithmetic.
//!
//! - [`LayerNorm`]: `y = (x − mean(x)) / sqrt(mean((x − mean(x))²) + ε) · γ + β` over the last
//!   axis, one pass per row (the normalisation itself is tract-linalg's RMS-norm kernel).
//! - [`MaskedSoftmax`]: `softmax(scores + mask)` over the last axis, where `mask` broadcasts
//!   over the other axes: the mask row is added to each score row, then tract's own softmax
//!   runs on the contiguous rows.
//!
//! [`fuse`] finds both patterns in a decluttered model and swaps them in; anything that does
//! not match exactly is left as it was, so a model of another shape still runs, only slower.
//! [`registry`] lets a model holding them be written to and read from tract's NNEF format.

use tract_nnef::internal::*;
use tract_onnx::tract_core::ops::binary::{BinMiniOp, TypedBinOp};
use tract_onnx::tract_core::ops::math::{Add, Mul, Sub};
use tract_onnx::tract_core::ops::nn::{Reduce, Reducer, RmsNorm, Softmax, SoftmaxKind};

/// Layer normalisation over the last axis, with learned scale γ and shift β.
///
/// Inputs: `x` (f32, any rank), `gamma` and `beta` (f32, as many elements as the last axis of
/// `x`, any shape of that size).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNorm {
    /// Added to the variance before the square root.
    pub eps: f32,
}

impl Eq for LayerNorm {}

impl Op for LayerNorm {
    fn name(&self) -> StaticName {
        "MnemoLayerNorm".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!("last axis, eps: {}", self.eps)])
    }

    op_as_typed_op!();
}

impl EvalOp for LayerNorm {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (x, gamma, beta) = args_3!(inputs);
        let mut x = x.into_tensor();
        let width = *x.shape().last().context("layer norm of a scalar")?;
        let gamma = gamma.try_as_plain_ram()?;
        let beta = beta.try_as_plain_ram()?;
        let (gamma, beta) = (gamma.as_slice::<f32>()?, beta.as_slice::<f32>()?);
        ensure!(gamma.len() == width && beta.len() == width, "γ and β must match the last axis");
        if width == 0 {
            return Ok(tvec!(x.into_tvalue()));
        }
        let rms_norm = tract_onnx::tract_core::tract_linalg::routines::rms_norm_f32()?;
        let mut plain = x.try_as_plain_ram_mut()?;
        for row in plain.as_slice_mut::<f32>()?.chunks_exact_mut(width) {
            let mean = sum(row) / width as f32;
            row.iter_mut().for_each(|v| *v -= mean);
            rms_norm(row, self.eps);
            for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
                *v = *v * g + b;
            }
        }
        drop(plain);
        Ok(tvec!(x.into_tvalue()))
    }
}

impl TypedOp for LayerNorm {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(inputs[0].datum_type == f32::datum_type(), "MnemoLayerNorm runs on f32");
        Ok(tvec!(inputs[0].without_value()))
    }

    as_op!();
}

/// `softmax(scores + mask)` over the last axis; `mask` has the last axis of `scores` and size 1
/// or the size of `scores` on every other axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskedSoftmax;

impl Op for MaskedSoftmax {
    fn name(&self) -> StaticName {
        "MnemoMaskedSoftmax".into()
    }

    op_as_typed_op!();
}

impl EvalOp for MaskedSoftmax {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (scores, mask) = args_2!(inputs);
        let mut scores = scores.into_tensor();
        let shape: TVec<usize> = scores.shape().into();
        let rank = shape.len();
        ensure!(rank >= 1 && mask.rank() == rank, "scores and mask must have the same rank");
        let width = shape[rank - 1];
        ensure!(mask.shape()[rank - 1] == width, "the mask must cover the last axis");
        // The mask's element stride along each axis, 0 where it broadcasts.
        let mut strides = tvec![0usize; rank];
        let mut stride = 1;
        for axis in (0..rank).rev() {
            let m = mask.shape()[axis];
            ensure!(m == 1 || m == shape[axis], "mask axis {axis} does not broadcast");
            strides[axis] = if m == 1 { 0 } else { stride };
            stride *= m;
        }
        let mask = mask.try_as_plain_ram()?;
        let mask = mask.as_slice::<f32>()?;
        if width > 0 {
            let mut plain = scores.try_as_plain_ram_mut()?;
            let mut index = tvec![0usize; rank - 1];
            for row in plain.as_slice_mut::<f32>()?.chunks_exact_mut(width) {
                let at: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
                for (v, m) in row.iter_mut().zip(&mask[at..at + width]) {
                    *v += m;
                }
                // Next row: odometer over the leading axes.
                for axis in (0..rank - 1).rev() {
                    index[axis] += 1;
                    if index[axis] < shape[axis] {
                        break;
                    }
                    index[axis] = 0;
                }
            }
        }
        let softmax =
            Softmax { axes: tvec!(rank - 1), quant_output_dt: None, kind: SoftmaxKind::Softmax };
        EvalOp::eval(&softmax, ctx, tvec!(scores.into_tvalue()))
    }
}

impl TypedOp for MaskedSoftmax {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(inputs[0].datum_type == f32::datum_type(), "MnemoMaskedSoftmax runs on f32");
        Ok(tvec!(inputs[0].without_value()))
    }

    as_op!();
}

/// Sums a row with eight running partial sums, so that the compiler can vectorise it.
fn sum(row: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// Replaces every layer norm and masked softmax chain of a decluttered model with the fused
/// op. Returns how many of each it replaced.
pub fn fuse(model: &mut TypedModel) -> TractResult<(usize, usize)> {
    let (mut norms, mut softmaxes) = (0, 0);
    for id in model.eval_order()? {
        if let Some(patch) = layer_norm_patch(model, id)? {
            patch.apply(model)?;
            norms += 1;
        } else if let Some(patch) = masked_softmax_patch(model, id)? {
            patch.apply(model)?;
            softmaxes += 1;
        }
    }
    if norms + softmaxes > 0 {
        model.compact()?;
    }
    Ok((norms, softmaxes))
}

fn bin_op<'m, B: BinMiniOp>(model: &'m TypedModel, outlet: OutletId) -> Option<&'m TypedNode> {
    let node = model.node(outlet.node);
    node.op_as::<TypedBinOp>().filter(|op| op.0.is::<B>()).map(|_| node)
}

/// The node's only consumer, when it has exactly one output used exactly once.
fn only_successor(model: &TypedModel, id: usize) -> Option<&TypedNode> {
    let node = model.node(id);
    (node.outputs.len() == 1 && node.outputs[0].successors.len() == 1)
        .then(|| model.node(node.outputs[0].successors[0].node))
}

/// The constant input of a binary node and the other input, when one input is constant.
fn const_and_other(model: &TypedModel, node: &TypedNode) -> Option<(Arc<Tensor>, OutletId)> {
    let facts = model.node_input_facts(node.id).ok()?;
    match (&facts[0].konst, &facts[1].konst) {
        (None, Some(k)) => Some((k.clone(), node.inputs[0])),
        (Some(k), None) => Some((k.clone(), node.inputs[1])),
        _ => None,
    }
}

fn f32_of(k: &Tensor) -> Option<Vec<f32>> {
    let plain = k.try_as_plain_ram().ok()?;
    plain.as_slice::<f32>().ok().map(<[f32]>::to_vec)
}

/// `Add(Mul(RmsNorm(Sub(x, Mul(Sum(x), 1/n))), γ), β)` over the last axis, anchored on the
/// `RmsNorm`, with every intermediate used once.
fn layer_norm_patch(model: &TypedModel, id: usize) -> TractResult<Option<TypedModelPatch>> {
    let node = model.node(id);
    let Some(rms) = node.op_as::<RmsNorm>() else { return Ok(None) };
    let fact = model.outlet_fact(node.id.into())?;
    let rank = fact.rank();
    if rank == 0 || rms.axis != rank - 1 || fact.datum_type != f32::datum_type() {
        return Ok(None);
    }
    let Some(width) = fact.shape[rank - 1].as_i64().map(|w| w as usize) else { return Ok(None) };
    let eps = rms.eps.cast_to_scalar::<f32>()?;
    // x − mean
    let Some(sub) = bin_op::<Sub>(model, node.inputs[0]) else { return Ok(None) };
    if only_successor(model, sub.id).map(|n| n.id) != Some(node.id) {
        return Ok(None);
    }
    let (x, mean) = (sub.inputs[0], sub.inputs[1]);
    // mean = Sum(x) × 1/n
    let Some(scale) = bin_op::<Mul>(model, mean) else { return Ok(None) };
    let Some((recip, summed)) = const_and_other(model, scale) else { return Ok(None) };
    let ok_recip = f32_of(&recip)
        .is_some_and(|r| r.len() == 1 && (r[0] * width as f32 - 1.0).abs() < 1e-5);
    let reduce = model.node(summed.node);
    let ok_reduce = reduce.op_as::<Reduce>().is_some_and(|r| {
        r.reducer == Reducer::Sum && r.axes.as_slice() == [rank - 1]
    }) && reduce.inputs[0] == x;
    if !ok_recip || !ok_reduce {
        return Ok(None);
    }
    // × γ, + β
    let Some(times) = only_successor(model, node.id) else { return Ok(None) };
    let Some(plus) = only_successor(model, times.id) else { return Ok(None) };
    let (Some(_), Some(_)) = (bin_op::<Mul>(model, times.id.into()), bin_op::<Add>(model, plus.id.into())) else {
        return Ok(None);
    };
    let Some((gamma, g_other)) = const_and_other(model, times) else { return Ok(None) };
    let Some((beta, b_other)) = const_and_other(model, plus) else { return Ok(None) };
    let wide = |k: &Tensor| k.len() == width && k.datum_type() == f32::datum_type();
    if g_other != node.id.into() || b_other != times.id.into() || !wide(&gamma) || !wide(&beta) {
        return Ok(None);
    }
    let mut patch = TypedModelPatch::default();
    let x = patch.tap_model(model, x)?;
    let gamma = patch.add_const(format!("{}.gamma", node.name), gamma.into_tensor())?;
    let beta = patch.add_const(format!("{}.beta", node.name), beta.into_tensor())?;
    let out = patch.wire_node(format!("{}.layer_norm", node.name), LayerNorm { eps }, &[x, gamma, beta])?;
    patch.shunt_outside(model, plus.id.into(), out[0])?;
    Ok(Some(patch))
}

/// `Softmax(Add(scores, mask))` over the last axis, where `mask` broadcasts to `scores`,
/// anchored on the `Softmax`.
fn masked_softmax_patch(model: &TypedModel, id: usize) -> TractResult<Option<TypedModelPatch>> {
    let node = model.node(id);
    let Some(softmax) = node.op_as::<Softmax>() else { return Ok(None) };
    let fact = model.outlet_fact(node.id.into())?;
    let rank = fact.rank();
    let plain = softmax.kind == SoftmaxKind::Softmax && softmax.quant_output_dt.is_none();
    if rank == 0 || softmax.axes.as_slice() != [rank - 1] || !plain
        || fact.datum_type != f32::datum_type()
    {
        return Ok(None);
    }
    let Some(add) = bin_op::<Add>(model, node.inputs[0]) else { return Ok(None) };
    if only_successor(model, add.id).map(|n| n.id) != Some(node.id) {
        return Ok(None);
    }
    let facts = model.node_input_facts(add.id)?;
    let (scores, mask) = if facts[0].shape == fact.shape { (0, 1) } else { (1, 0) };
    let (s, m) = (&facts[scores].shape, &facts[mask].shape);
    let broadcasts = s == &fact.shape && m.rank() == rank && m[rank - 1] == s[rank - 1]
        && (0..rank - 1).all(|a| m[a] == s[a] || m[a].is_one())
        && facts[mask].datum_type == f32::datum_type();
    if !broadcasts || m == s {
        return Ok(None);
    }
    let mut patch = TypedModelPatch::default();
    let inputs = patch.taps(model, &[add.inputs[scores], add.inputs[mask]])?;
    let out = patch.wire_node(format!("{}.masked", node.name), MaskedSoftmax, &inputs)?;
    patch.shunt_outside(model, node.id.into(), out[0])?;
    Ok(Some(patch))
}
