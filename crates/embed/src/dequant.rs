//! Weights stored as int8 blocks, dequantised in one pass when the model loads.
//!
//! `model.onnx` (see `tools/onnx_graph.py`) stores each linear layer's weight `W` as int8
//! values `q` with one f32 scale `s` per block of 32, and rebuilds it with three ops on
//! constants:
//!
//! ```text
//! W = Reshape(Mul(Cast<f32>(q), s), shape)    q: i8 [in/32, 32, out], s: f32 [in/32, 1, out]
//! ```
//!
//! tract folds such constants during type analysis, one op at a time, through its generic
//! evaluation: the cast allocates an f32 copy, the broadcasting multiply clones it and walks it
//! element by element, and the reshape clones it again. For the 72 weights of the default model
//! (21 M values) that was the largest part of the type analysis in wasm.
//! [`fold_int8_dequant`] instead computes each `W = q · s` into its final buffer in one pass
//! and puts a constant holding it in place of the `Reshape`; the three ops, left with no
//! consumer, are dropped when the graph is compacted. The values are the ones tract would
//! compute: each is one f32 product of an exactly converted int8 and its scale.
//!
//! Anything that does not match exactly — another cast, a shared intermediate, a scale that
//! broadcasts `q` itself, a shape with `0` or `-1` — is left to tract.

use std::sync::Arc;

use tract_onnx::prelude::*;
use tract_onnx::tract_core::ops::math::Mul;
use tract_onnx::tract_hir::infer::InferenceNode;
use tract_onnx::tract_hir::ops::array::Reshape;
use tract_onnx::tract_hir::ops::binary::InferenceBinOp;
use tract_onnx::tract_hir::ops::expandable::Expansion;
use tract_onnx::tract_hir::ops::konst::Const;

/// One `Reshape(Mul(Cast<f32>(q), s), shape)` on constants.
struct Chain {
    q: Arc<Tensor>,
    scale: Arc<Tensor>,
    shape: Vec<usize>,
}

/// Replaces every matching chain with the constant it computes; returns how many it replaced.
/// Compact the model afterwards (`into_compact`) to drop the chains' dead ops, or type analysis
/// still folds them.
pub(crate) fn fold_int8_dequant(model: &mut InferenceModel) -> TractResult<usize> {
    let mut folded = 0;
    for id in 0..model.nodes().len() {
        let Some(chain) = match_chain(model, id) else { continue };
        let weight = dequantise(&chain.q, &chain.scale, &chain.shape)?;
        replace_with_const(model, id, weight)?;
        folded += 1;
    }
    Ok(folded)
}

fn match_chain(model: &InferenceModel, id: usize) -> Option<Chain> {
    let reshape = model.node(id);
    expansion::<Reshape>(reshape)?;
    let [data, shape] = reshape.inputs[..] else { return None };
    let shape = const_value(model, shape)?;
    let shape: Vec<usize> = shape
        .try_as_plain_ram()
        .ok()?
        .as_slice::<i64>()
        .ok()?
        .iter()
        .map(|&d| usize::try_from(d).ok().filter(|&d| d > 0))
        .collect::<Option<_>>()?;
    let mul = sole_producer(model, data)?;
    if !expansion::<InferenceBinOp>(mul)?.0.is::<Mul>() {
        return None;
    }
    let [a, b] = mul.inputs[..] else { return None };
    let (cast, scale) = if is_f32_cast(model.node(a.node)) { (a, b) } else { (b, a) };
    let cast = sole_producer(model, cast).filter(|n| is_f32_cast(n))?;
    let [q] = cast.inputs[..] else { return None };
    let q = const_value(model, q)?;
    let scale = const_value(model, scale)?;
    let fits = q.datum_type() == i8::datum_type()
        && scale.datum_type() == f32::datum_type()
        && broadcasts_into(scale.shape(), q.shape())
        && shape.iter().product::<usize>() == q.len();
    fits.then_some(Chain { q, scale, shape })
}

/// The op of `node` as the expansion `E`, if it is one.
fn expansion<E: Expansion>(node: &InferenceNode) -> Option<&E> {
    node.op_as::<Box<dyn Expansion>>()?.as_any().downcast_ref::<E>()
}

/// ONNX `Cast` to f32. tract-onnx keeps its op type private; its name and its derived `Debug`
/// (`Cast { to: F32 }`) say what it is. Should either change, nothing matches and tract folds
/// the chain itself.
fn is_f32_cast(node: &InferenceNode) -> bool {
    node.op.name() == "onnx.Cast" && format!("{:?}", node.op).ends_with("{ to: F32 }")
}

/// The value of a constant's output.
fn const_value(model: &InferenceModel, outlet: OutletId) -> Option<Arc<Tensor>> {
    (outlet.slot == 0).then(|| model.node(outlet.node).op_as::<Const>().map(|c| c.val().clone()))?
}

/// The node producing `outlet`, when that output feeds exactly one input and is not a model
/// output (so replacing its consumer leaves it dead).
fn sole_producer(model: &InferenceModel, outlet: OutletId) -> Option<&InferenceNode> {
    let node = model.node(outlet.node);
    let output = node.outputs.get(outlet.slot)?;
    let is_output = model.output_outlets().ok()?.contains(&outlet);
    (output.successors.len() == 1 && !is_output).then_some(node)
}

/// Whether `small` broadcasts to `big` without growing it: numpy's rule with `small` padded on
/// the left with 1s, every axis equal or 1.
fn broadcasts_into(small: &[usize], big: &[usize]) -> bool {
    small.len() <= big.len()
        && small.iter().rev().zip(big.iter().rev()).all(|(&s, &b)| s == b || s == 1)
}

/// `q · scale` (f32, `scale` broadcast over `q`) laid out as `shape`, in one pass.
fn dequantise(q: &Tensor, scale: &Tensor, shape: &[usize]) -> TractResult<Tensor> {
    let (q_plain, scale_plain) = (q.try_as_plain_ram()?, scale.try_as_plain_ram()?);
    let values = q_plain.as_slice::<i8>()?;
    let scales = scale_plain.as_slice::<f32>()?;
    let dims = q.shape();
    let rank = dims.len();
    // The scale's stride along each axis of q: 0 where it broadcasts.
    let mut padded = vec![1usize; rank - scale.rank()];
    padded.extend_from_slice(scale.shape());
    let mut strides = vec![0usize; rank];
    let mut stride = 1;
    for axis in (0..rank).rev() {
        strides[axis] = if padded[axis] == 1 { 0 } else { stride };
        stride *= padded[axis];
    }
    let row = dims.last().copied().unwrap_or(1).max(1);
    let row_stride = strides.last().copied().unwrap_or(0);
    // SAFETY: every element is written below: the rows of `values` cover all of it.
    let mut out = unsafe { Tensor::uninitialized::<f32>(shape)? };
    let mut out_plain = out.try_as_plain_ram_mut()?;
    let dst = out_plain.as_slice_mut::<f32>()?;
    let mut index = vec![0usize; rank.saturating_sub(1)];
    for (q_row, d_row) in values.chunks(row).zip(dst.chunks_mut(row)) {
        let at: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        if row_stride == 0 {
            let s = scales[at];
            d_row.iter_mut().zip(q_row).for_each(|(d, &v)| *d = v as f32 * s);
        } else {
            let s_row = &scales[at..at + row];
            for ((d, &v), &s) in d_row.iter_mut().zip(q_row).zip(s_row) {
                *d = v as f32 * s;
            }
        }
        // The next row's index over the leading axes.
        for axis in (0..index.len()).rev() {
            index[axis] += 1;
            if index[axis] < dims[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    Ok(out)
}

/// Turns node `id` into a constant holding `value`, detaching it from its inputs.
fn replace_with_const(model: &mut InferenceModel, id: usize, value: Tensor) -> TractResult<()> {
    let inputs = std::mem::take(&mut model.node_mut(id).inputs);
    for (slot, input) in inputs.iter().enumerate() {
        let inlet = InletId::new(id, slot);
        model.node_mut(input.node).outputs[input.slot].successors.retain(|s| *s != inlet);
    }
    model.node_mut(id).op = Box::new(Const::new(Arc::new(value))?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::pb;

    /// The same product through tract's own ops, as type analysis would fold it.
    fn by_tract(q: &Tensor, scale: &Tensor, shape: &[usize]) -> Tensor {
        let cast = q.cast_to::<f32>().unwrap().into_owned();
        // tract's binary ops take operands of one rank: pad the scale's shape on the left.
        let mut padded = vec![1; q.rank() - scale.rank()];
        padded.extend_from_slice(scale.shape());
        let scale = scale.clone().into_shape(&padded).unwrap();
        use tract_nnef::internal::{EvalContext, EvalOp};
        let product = tract_onnx::tract_core::ops::math::mul()
            .eval(&EvalContext::out_of_plan(), tvec!(cast.into_tvalue(), scale.into_tvalue()))
            .unwrap()
            .remove(0)
            .into_tensor();
        product.into_shape(shape).unwrap()
    }

    fn q(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        let v: Vec<i8> = (0..n).map(|i| ((i * 37 + 11) % 256) as u8 as i8).collect();
        Tensor::from_shape(shape, &v).unwrap()
    }

    fn scales(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        let v: Vec<f32> = (0..n).map(|i| 0.001 + i as f32 * 0.0137).collect();
        Tensor::from_shape(shape, &v).unwrap()
    }

    #[test]
    fn block_scales_give_the_values_tract_computes() {
        for (qs, ss) in [
            (vec![3, 32, 5], vec![3, 1, 5]),
            (vec![2, 4, 7], vec![1, 1, 7]),
            (vec![2, 4, 7], vec![2, 4, 1]),
            (vec![2, 4, 7], vec![4, 7]),
            (vec![2, 4, 7], vec![1]),
            (vec![9], vec![9]),
        ] {
            let (q, s) = (q(&qs), scales(&ss));
            let n = q.len();
            let shape = [n / qs[qs.len() - 1], qs[qs.len() - 1]];
            let ours = dequantise(&q, &s, &shape).unwrap();
            assert_eq!(ours, by_tract(&q, &s, &shape), "q {qs:?} scale {ss:?}");
        }
    }

    #[test]
    fn a_scale_that_would_grow_q_is_left_alone() {
        assert!(broadcasts_into(&[3, 1, 5], &[3, 32, 5]));
        assert!(broadcasts_into(&[5], &[3, 32, 5]));
        assert!(!broadcasts_into(&[3, 2, 5], &[3, 32, 5]));
        assert!(!broadcasts_into(&[2, 3, 32, 5], &[3, 32, 5]));
    }

    /// The chain `tools/onnx_graph.py` writes, built as an ONNX import leaves it, folds to one
    /// constant, and the whole model computes what it computed before.
    #[test]
    fn a_weight_chain_in_a_graph_folds_and_keeps_its_result() {
        let build = || -> InferenceModel {
            tract_onnx::onnx().model_for_proto_model(&chain_onnx()).unwrap()
        };
        let input =
            tract_ndarray::Array2::from_shape_fn((2, 64), |(i, j)| (i * 64 + j) as f32 * 0.01);
        let run = |m: InferenceModel| {
            let plan = m.into_optimized().unwrap().into_runnable().unwrap();
            plan.run(tvec!(input.clone().into_tensor().into_tvalue()))
                .unwrap()
                .remove(0)
                .into_tensor()
        };
        let before = run(build());
        let mut m = build();
        assert_eq!(fold_int8_dequant(&mut m).unwrap(), 1);
        let m = m.into_compact().unwrap();
        assert!(m.nodes().iter().all(|n| !is_f32_cast(n)), "the cast is gone");
        assert_eq!(run(m), before);
    }

    /// The default `model.onnx` stores all 72 linear weights (12 layers × query, key, value,
    /// attention output, FFN in and out) this way, and every one folds.
    #[test]
    fn every_weight_of_the_default_model_folds() {
        let path = crate::test_model_dir().join("model.onnx");
        let bytes = std::fs::read(path).unwrap();
        let mut model = tract_onnx::onnx().model_for_read(&mut &bytes[..]).unwrap();
        let casts = |m: &InferenceModel| m.nodes().iter().filter(|n| is_f32_cast(n)).count();
        let before = casts(&model);
        assert_eq!(fold_int8_dequant(&mut model).unwrap(), 72);
        let model = model.into_compact().unwrap();
        // what is left is the attention mask's cast
        assert_eq!(casts(&model), before - 72);
    }

    /// `y = x · W` with `W` stored as `tools/onnx_graph.py` stores it: int8 blocks of 32 along
    /// the input axis, one f32 scale per block and output.
    fn chain_onnx() -> pb::ModelProto {
        let (inputs, outputs, block) = (64usize, 6usize, 32usize);
        let q = q(&[inputs / block, block, outputs]);
        let s = scales(&[inputs / block, 1, outputs]);
        let init = |name: &str, data_type: i32, t: &Tensor| pb::TensorProto {
            name: name.into(),
            dims: t.shape().iter().map(|&d| d as i64).collect(),
            data_type,
            raw_data: t.as_bytes().to_vec(),
            ..Default::default()
        };
        let shape = tensor1(&[inputs as i64, outputs as i64]);
        let node = |op: &str, inputs: &[&str], attribute: Vec<pb::AttributeProto>| pb::NodeProto {
            name: format!("{op}_node"),
            op_type: op.into(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![format!("{op}_out")],
            attribute,
            ..Default::default()
        };
        let to_f32 = pb::AttributeProto {
            name: "to".into(),
            r#type: pb::attribute_proto::AttributeType::Int as i32,
            i: pb::tensor_proto::DataType::Float as i64,
            ..Default::default()
        };
        let value = |name: &str, dims: &[i64]| {
            use pb::tensor_shape_proto::{dimension::Value, Dimension};
            let dim = dims
                .iter()
                .map(|&d| Dimension { value: Some(Value::DimValue(d)), ..Default::default() })
                .collect();
            let tensor = pb::type_proto::Tensor {
                elem_type: pb::tensor_proto::DataType::Float as i32,
                shape: Some(pb::TensorShapeProto { dim }),
            };
            let r#type = pb::TypeProto {
                value: Some(pb::type_proto::Value::TensorType(tensor)),
                ..Default::default()
            };
            pb::ValueInfoProto { name: name.into(), r#type: Some(r#type), ..Default::default() }
        };
        let graph = pb::GraphProto {
            node: vec![
                node("Cast", &["w.q"], vec![to_f32]),
                node("Mul", &["Cast_out", "w.s"], vec![]),
                node("Reshape", &["Mul_out", "w.shape"], vec![]),
                node("MatMul", &["x", "Reshape_out"], vec![]),
            ],
            initializer: vec![
                init("w.q", pb::tensor_proto::DataType::Int8 as i32, &q),
                init("w.s", pb::tensor_proto::DataType::Float as i32, &s),
                init("w.shape", pb::tensor_proto::DataType::Int64 as i32, &shape),
            ],
            input: vec![value("x", &[2, inputs as i64])],
            output: vec![value("MatMul_out", &[2, outputs as i64])],
            ..Default::default()
        };
        pb::ModelProto {
            ir_version: 8,
            opset_import: vec![pb::OperatorSetIdProto { domain: String::new(), version: 17 }],
            graph: Some(graph),
            ..Default::default()
        }
    }
}
