//! How many of the fused ops a graph holds (what a load reports and the tests count).

use tract_onnx::prelude::*;

use crate::attention::Attention;
use crate::fuse::{LayerNorm, MaskedSoftmax};

/// How many fused layer norms and masked softmaxes a model holds (a fused attention block,
/// [`Attention`], holds one masked softmax).
pub fn count(model: &TypedModel) -> (usize, usize) {
    let norms = model.nodes.iter().filter(|n| n.op_is::<LayerNorm>()).count();
    let softmaxes =
        model.nodes.iter().filter(|n| n.op_is::<MaskedSoftmax>() || n.op_is::<Attention>()).count();
    (norms, softmaxes)
}
