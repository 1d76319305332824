//! The model stored already typed, decluttered and fused, in tract's NNEF format.
//!
//! Loading `model.onnx` parses the protobuf, runs tract's type analysis (a fixpoint over
//! symbolic shapes that also folds the int8 × scale weights to f32) and declutters: 1.6 s of a
//! 1.9 s load in wasm, 0.5 s natively. [`compile`] does all of it once, at build time, and
//! writes the result as an NNEF tar archive (`graph.nnef` plus one `.dat` file per tensor);
//! a load then only reads the archive into tensors.
//!
//! The archive ends with the same digest trailer as a built `model.onnx` (see `digest.rs`),
//! carrying the hash of the ONNX file it was compiled from, so both files give the same model
//! id and vectors made with either stay comparable.
//!
//! The ops tract's NNEF lacks a name for are registered here as `mnemo_*` primitives: the exact
//! GELU, and the fused layer norm and masked softmax of `fuse.rs`.

use tract_nnef::internal::*;
use tract_onnx::tract_core::ops::nn::gelu_exact::GeluExact;
use tract_onnx::WithOnnx;

use super::fuse::{LayerNorm, MaskedSoftmax};

/// Whether `bytes` look like a tar archive (the `ustar` magic of its first header).
pub fn is_archive(bytes: &[u8]) -> bool {
    bytes.get(257..262) == Some(b"ustar")
}

/// The archive's file name for a model file: `model.onnx` -> `model.nnef.tar`,
/// `model.q4.onnx` -> `model.q4.nnef.tar` (a name without `.onnx` gets `.nnef.tar` appended).
pub fn archive_name(onnx_file: &str) -> String {
    format!("{}.nnef.tar", onnx_file.strip_suffix(".onnx").unwrap_or(onnx_file))
}

/// tract's NNEF reader and writer with the ONNX extensions and the `mnemo_*` ops.
pub fn framework() -> Nnef {
    tract_nnef::nnef().with_onnx().with_registry(registry())
}

/// Writes a decluttered, fused model as an NNEF tar archive. Deterministic: every entry is
/// dated 1980-01-01 (no clock is read, which wasm32-unknown-unknown has none of), so the same
/// model always compiles to the same bytes.
pub fn write(model: &TypedModel) -> TractResult<Vec<u8>> {
    framework().write_to_tar_with_config(model, Vec::new(), false, true)
}

/// Reads an archive written by [`write`].
pub fn read(bytes: &[u8]) -> TractResult<TypedModel> {
    framework().model_for_read(&mut &bytes[..])
}

fn registry() -> Registry {
    let mut r = Registry::new("mnemo")
        .with_doc("Extension `mnemo`: the exact GELU and the fused layer norm and masked softmax")
        .with_doc("of mnemo's embedder (src/embed/fuse.rs).");
    r.register_unit_element_wise("mnemo_gelu_exact", &GeluExact {});
    let tensor = |name: &str| TypeName::Scalar.tensor().named(name);
    let output = [("output", TypeName::Scalar.tensor())];
    r.register_dumper(dump_layer_norm);
    r.register_primitive(
        "mnemo_layer_norm",
        &[tensor("input"), tensor("gamma"), tensor("beta"), TypeName::Scalar.named("epsilon")],
        &output,
        load_layer_norm,
    );
    r.register_primitive(
        "mnemo_residual_layer_norm",
        &[
            tensor("input"),
            tensor("residual"),
            tensor("gamma"),
            tensor("beta"),
            TypeName::Scalar.named("epsilon"),
        ],
        &output,
        load_layer_norm,
    );
    r.register_dumper(dump_masked_softmax);
    r.register_primitive(
        "mnemo_masked_softmax",
        &[tensor("scores"), tensor("mask")],
        &output,
        load_masked_softmax,
    );
    r
}

/// The NNEF values already written for a node's inputs, in order.
fn inputs_of(ast: &IntoAst, node: &TypedNode) -> Vec<Arc<RValue>> {
    node.inputs.iter().map(|i| ast.mapping[i].clone()).collect()
}

fn dump_layer_norm(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &LayerNorm,
) -> TractResult<Option<Arc<RValue>>> {
    let name = if op.residual { "mnemo_residual_layer_norm" } else { "mnemo_layer_norm" };
    Ok(Some(invocation(name, &inputs_of(ast, node), &[("epsilon", numeric(op.eps))])))
}

fn load_layer_norm(builder: &mut ModelBuilder, inv: &ResolvedInvocation) -> TractResult<Value> {
    let residual = inv.invocation.id.0 == "mnemo_residual_layer_norm";
    let mut inputs: TVec<OutletId> = tvec!(inv.named_arg_as(builder, "input")?);
    if residual {
        inputs.push(inv.named_arg_as(builder, "residual")?);
    }
    inputs.push(inv.named_arg_as(builder, "gamma")?);
    inputs.push(inv.named_arg_as(builder, "beta")?);
    let eps: f32 = inv.named_arg_as(builder, "epsilon")?;
    builder.wire(LayerNorm { eps, residual }, &inputs)
}

fn dump_masked_softmax(
    ast: &mut IntoAst,
    node: &TypedNode,
    _op: &MaskedSoftmax,
) -> TractResult<Option<Arc<RValue>>> {
    Ok(Some(invocation("mnemo_masked_softmax", &inputs_of(ast, node), &[])))
}

fn load_masked_softmax(builder: &mut ModelBuilder, inv: &ResolvedInvocation) -> TractResult<Value> {
    let scores = inv.named_arg_as(builder, "scores")?;
    let mask = inv.named_arg_as(builder, "mask")?;
    builder.wire(MaskedSoftmax, &[scores, mask])
}

#[cfg(test)]
mod tests {
    use super::archive_name;

    #[test]
    fn archive_names_follow_the_model_file() {
        assert_eq!(archive_name("model.onnx"), "model.nnef.tar");
        assert_eq!(archive_name("model.q4.onnx"), "model.q4.nnef.tar");
        assert_eq!(archive_name("weights"), "weights.nnef.tar");
    }
}
