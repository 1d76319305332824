//! The fused ops on the default model: every layer's attention is found and fused, from an
//! ONNX file and from a compiled archive.

use tract_onnx::prelude::*;

use crate::attention::fuse_attention;
use crate::fuse::MaskedSoftmax;

/// The pattern is found in each of the default model's 12 layers, and the model still runs
/// with it on any host (the portable path where there is no AVX-512).
#[test]
fn every_layer_of_the_default_model_fuses() {
    let dir = crate::test_model_dir();
    let onnx = std::fs::read(dir.join("model.onnx")).unwrap();
    let (mut model, ..) = crate::bert::decluttered_onnx(&onnx, &mut |_| {}).unwrap();
    assert_eq!(fuse_attention(&mut model).unwrap(), 12);
    assert!(!model.nodes.iter().any(|n| n.op_is::<MaskedSoftmax>()));
    assert_eq!(crate::fused_ops::count(&model), (25, 12));
    // A compiled archive holds the graph before this rewrite, and fuses the same at load.
    let archive = crate::nnef::write(&base_of(&onnx)).unwrap();
    let mut model = crate::nnef::read(&archive).unwrap();
    // NNEF gives it back with identity casts and reshapes around each einsum: only once
    // decluttered does it hold the chain (`BertEmbedder` declutters archives natively).
    model.declutter().unwrap();
    assert_eq!(fuse_attention(&mut model).unwrap(), 12);
}

fn base_of(onnx: &[u8]) -> TypedModel {
    crate::bert::decluttered_onnx(onnx, &mut |_| {}).unwrap().0
}
