//! Two fused operators for BERT-family encoders, put in place of the chains of small ops
//! tract's ONNX import leaves behind, and the rewrite that puts them there.
//!
//! After decluttering, tract runs each layer norm as six ops (sum, × 1/n, subtract the mean,
//! RMS-normalise, × γ, + β) and the attention mask as a broadcasting `Add` of a `[B, 1, 1, T]`
//! bias to the `[B, H, S, T]` scores ahead of the softmax, and the residual sums as an `Add` of
//! its own. Each walks its tensor once (the broadcasting `Add` one element at a time) and the
//! small ones cost more in dispatch than in arithmetic: fusing them took one 32-token passage
//! from 24.7 to 20.1–21.8 ms natively and one 128-token passage from 98.8 to 71.2–73.6 ms
//! (`cargo bench --profile ci --bench embed`, 2026-12-04).
//!
//! - [`LayerNorm`]: `y = (x − mean(x)) / sqrt(mean((x − mean(x))²) + ε) · γ + β` over the last
//!   axis, one pass per row (the normalisation itself is tract-linalg's RMS-norm kernel), with
//!   the residual sum `x = a + b` in front of it folded in when `x` is read by nothing else.
//! - [`MaskedSoftmax`]: `softmax(scores + mask)` over the last axis, where `mask` broadcasts
//!   over the other axes: the mask row is added to each score row, then tract's own softmax
//!   runs on the contiguous rows.
//!
//! [`fuse`] finds both patterns in a decluttered model and swaps them in; anything that does
//! not match exactly is left as it was, so a model of another shape still runs, only slower.
//! `nnef.rs` registers both with tract's NNEF format, so a compiled model keeps them.

use tract_nnef::internal::*;
use tract_onnx::tract_core::ops::binary::{BinMiniOp, TypedBinOp};
use tract_onnx::tract_core::ops::math::{Add, Mul, Sub};
use tract_onnx::tract_core::ops::nn::{Reduce, Reducer, RmsNorm, Softmax, SoftmaxKind};

/// Layer normalisation over the last axis, with learned scale γ and shift β, optionally of a
/// sum `x + residual` (the residual connection every post-norm BERT layer ends with).
///
/// Inputs: `x` (f32, any rank), with `residual` the same shape as `x` when
/// [`LayerNorm::residual`] is set, then `gamma` and `beta` (f32, as many elements as the last
/// axis of `x`, any shape of that size).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNorm {
    /// Added to the variance before the square root.
    pub eps: f32,
    /// Whether a second input is added to `x` first.
    pub residual: bool,
}

impl Eq for LayerNorm {}

impl Op for LayerNorm {
    fn name(&self) -> StaticName {
        "MnemoLayerNorm".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!("last axis, eps: {}, residual: {}", self.eps, self.residual)])
    }

    op_as_typed_op!();
}

impl EvalOp for LayerNorm {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let mut inputs = inputs;
        let residual = if self.residual { Some(inputs.remove(1)) } else { None };
        let (x, gamma, beta) = args_3!(inputs);
        let mut x = x.into_tensor();
        if let Some(r) = &residual {
            ensure!(r.shape() == x.shape(), "the residual must have the shape of x");
        }
        let residual = residual.as_ref().map(|r| r.try_as_plain_ram()).transpose()?;
        let residual = residual.as_ref().map(|r| r.as_slice::<f32>()).transpose()?;
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
        for (i, row) in plain.as_slice_mut::<f32>()?.chunks_exact_mut(width).enumerate() {
            if let Some(r) = residual {
                row.iter_mut().zip(&r[i * width..][..width]).for_each(|(v, r)| *v += r);
            }
            let mean = sum(row) / width as f32;
            row.iter_mut().for_each(|v| *v -= mean);
            rms_norm(row, self.eps);
            for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
                *v = *v * g + b;
            }
        }
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
        // A mask row of zeros (a text with no padding: every batch of one) adds nothing, so
        // its score rows skip the pass. Adding 0 would only turn -0 into +0, which the
        // softmax's exp maps to the same 1.
        let masks: Vec<bool> = if width > 0 {
            mask.chunks_exact(width).map(|m| m.iter().any(|&v| v != 0.0)).collect()
        } else {
            Vec::new()
        };
        if width > 0 && masks.iter().any(|&m| m) {
            let mut plain = scores.try_as_plain_ram_mut()?;
            let mut index = tvec![0usize; rank - 1];
            for row in plain.as_slice_mut::<f32>()?.chunks_exact_mut(width) {
                let at: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
                if masks[at / width] {
                    for (v, m) in row.iter_mut().zip(&mask[at..at + width]) {
                        *v += m;
                    }
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

pub(super) fn bin_op<B: BinMiniOp>(model: &TypedModel, outlet: OutletId) -> Option<&TypedNode> {
    let node = model.node(outlet.node);
    node.op_as::<TypedBinOp>().filter(|op| op.0.is::<B>()).map(|_| node)
}

/// The node's only consumer, when it has exactly one output used exactly once.
pub(super) fn only_successor(model: &TypedModel, id: usize) -> Option<&TypedNode> {
    let node = model.node(id);
    (node.outputs.len() == 1 && node.outputs[0].successors.len() == 1)
        .then(|| model.node(node.outputs[0].successors[0].node))
}

/// The constant input of a binary node and the other input, when one input is constant.
pub(super) fn const_and_other(
    model: &TypedModel,
    node: &TypedNode,
) -> Option<(Arc<Tensor>, OutletId)> {
    let facts = model.node_input_facts(node.id).ok()?;
    match (&facts[0].konst, &facts[1].konst) {
        (None, Some(k)) => Some((k.clone(), node.inputs[0])),
        (Some(k), None) => Some((k.clone(), node.inputs[1])),
        _ => None,
    }
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
    let ok_recip = recip.len() == 1
        && recip.datum_type() == f32::datum_type()
        && recip.cast_to_scalar::<f32>().is_ok_and(|r| (r * width as f32 - 1.0).abs() < 1e-5);
    let reduce = model.node(summed.node);
    let ok_reduce = reduce
        .op_as::<Reduce>()
        .is_some_and(|r| r.reducer == Reducer::Sum && r.axes.as_slice() == [rank - 1])
        && reduce.inputs[0] == x;
    if !ok_recip || !ok_reduce {
        return Ok(None);
    }
    // × γ, + β
    let Some(times) = only_successor(model, node.id) else { return Ok(None) };
    let Some(plus) = only_successor(model, times.id) else { return Ok(None) };
    let (Some(_), Some(_)) =
        (bin_op::<Mul>(model, times.id.into()), bin_op::<Add>(model, plus.id.into()))
    else {
        return Ok(None);
    };
    let Some((gamma, g_other)) = const_and_other(model, times) else { return Ok(None) };
    let Some((beta, b_other)) = const_and_other(model, plus) else { return Ok(None) };
    let wide = |k: &Tensor| k.len() == width && k.datum_type() == f32::datum_type();
    if g_other != node.id.into() || b_other != times.id.into() || !wide(&gamma) || !wide(&beta) {
        return Ok(None);
    }
    let mut patch = TypedModelPatch::default();
    let mut inputs = match residual_sum(model, x, [reduce.id, sub.id]) {
        Some((a, b)) => patch.taps(model, &[a, b])?,
        None => patch.taps(model, &[x])?,
    };
    let residual = inputs.len() == 2;
    inputs.push(patch.add_const(format!("{}.gamma", node.name), gamma.into_tensor())?);
    inputs.push(patch.add_const(format!("{}.beta", node.name), beta.into_tensor())?);
    let op = LayerNorm { eps, residual };
    let out = patch.wire_node(format!("{}.layer_norm", node.name), op, &inputs)?;
    patch.shunt_outside(model, plus.id.into(), out[0])?;
    Ok(Some(patch))
}

/// The two terms of `x` when it is an `Add` of two tensors of its own shape, read only by the
/// layer norm's `consumers`.
fn residual_sum(
    model: &TypedModel,
    x: OutletId,
    consumers: [usize; 2],
) -> Option<(OutletId, OutletId)> {
    let add = bin_op::<Add>(model, x)?;
    let mut readers: Vec<usize> = add.outputs[0].successors.iter().map(|s| s.node).collect();
    readers.sort_unstable();
    let mut want = consumers.to_vec();
    want.sort_unstable();
    let facts = model.node_input_facts(add.id).ok()?;
    let out = model.outlet_fact(x).ok()?;
    let same = facts.iter().all(|f| f.shape == out.shape && f.datum_type == f32::datum_type());
    (readers == want && same && add.outputs.len() == 1).then(|| (add.inputs[0], add.inputs[1]))
}

/// `Softmax(Add(scores, mask))` over the last axis, where `mask` broadcasts to `scores`,
/// anchored on the `Softmax`.
fn masked_softmax_patch(model: &TypedModel, id: usize) -> TractResult<Option<TypedModelPatch>> {
    let node = model.node(id);
    let Some(softmax) = node.op_as::<Softmax>() else { return Ok(None) };
    let fact = model.outlet_fact(node.id.into())?;
    let rank = fact.rank();
    let plain = softmax.kind == SoftmaxKind::Softmax && softmax.quant_output_dt.is_none();
    if rank == 0
        || softmax.axes.as_slice() != [rank - 1]
        || !plain
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
    let broadcasts = s == &fact.shape
        && m.rank() == rank
        && m[rank - 1] == s[rank - 1]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: f32) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * 0.37 + seed).sin() * 3.0).collect()
    }

    fn run(op: &dyn EvalOp, inputs: Vec<Tensor>) -> Vec<f32> {
        let inputs = inputs.into_iter().map(Tensor::into_tvalue).collect();
        let out = op.eval(&EvalContext::out_of_plan(), inputs).unwrap().remove(0);
        out.try_as_plain_ram().unwrap().as_slice::<f32>().unwrap().to_vec()
    }

    #[test]
    fn layer_norm_of_a_residual_sum_matches_the_formula() {
        let (rows, width) = (3, 20);
        let (x, r) = (values(rows * width, 0.1), values(rows * width, 2.0));
        let (g, b) = (values(width, 5.0), values(width, 7.0));
        let t = |v: &[f32], shape: &[usize]| Tensor::from_shape(shape, v).unwrap();
        let inputs = vec![
            t(&x, &[1, rows, width]),
            t(&r, &[1, rows, width]),
            t(&g, &[1, 1, width]),
            t(&b, &[width]),
        ];
        let got = run(&LayerNorm { eps: 1e-12, residual: true }, inputs);
        for row in 0..rows {
            let s: Vec<f64> =
                (0..width).map(|i| (x[row * width + i] + r[row * width + i]) as f64).collect();
            let mean = s.iter().sum::<f64>() / width as f64;
            let var = s.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / width as f64;
            for i in 0..width {
                let want = (s[i] - mean) / (var + 1e-12).sqrt() * g[i] as f64 + b[i] as f64;
                let have = got[row * width + i] as f64;
                assert!((want - have).abs() < 1e-4, "row {row} col {i}: {have} vs {want}");
            }
        }
    }

    #[test]
    fn masked_softmax_adds_the_broadcast_mask_row_by_row() {
        let mut mask = vec![0f32; 2 * 5];
        mask[3] = -10000.0; // batch 0 does not see key 3
        mask[5 + 4] = -10000.0; // batch 1 does not see key 4
        check_masked_softmax(&mask, &[3, 4]);
        // Batch 1 has no padding: its rows skip the add and are the plain softmax.
        let mut mask = vec![0f32; 2 * 5];
        mask[3] = -10000.0;
        check_masked_softmax(&mask, &[3]);
        check_masked_softmax(&[0.0; 10], &[]);
    }

    /// `MaskedSoftmax` of a `[2, 3, 2, 5]` score tensor with a `[2, 1, 1, 5]` mask against the
    /// formula, where `masked[b]` is the key batch `b` does not see, if any.
    fn check_masked_softmax(mask: &[f32], masked: &[usize]) {
        let shape = [2, 3, 2, 5]; // batch, heads, queries, keys
        let scores = values(shape.iter().product(), 0.3);
        let inputs = vec![
            Tensor::from_shape(&shape, &scores).unwrap(),
            Tensor::from_shape(&[2, 1, 1, 5], mask).unwrap(),
        ];
        let got = run(&MaskedSoftmax, inputs);
        for (row, out) in got.chunks(5).enumerate() {
            let batch = row / (3 * 2);
            let x: Vec<f64> =
                (0..5).map(|k| scores[row * 5 + k] as f64 + mask[batch * 5 + k] as f64).collect();
            let max = x.iter().cloned().fold(f64::MIN, f64::max);
            let total: f64 = x.iter().map(|v| (v - max).exp()).sum();
            for k in 0..5 {
                let want = (x[k] - max).exp() / total;
                assert!((want - out[k] as f64).abs() < 1e-5, "row {row} key {k}");
            }
            if let Some(&key) = masked.get(batch) {
                assert!(out[key] < 1e-6, "a masked key gets no weight");
            }
        }
    }
}
