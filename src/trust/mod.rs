//! Trust at write time: instruction-like text from untrusted origins, and secrets that should
//! never be stored in the clear. Both are deterministic, documented detectors; neither calls a
//! model. Where a write came from is `record::Origin`.

pub mod instructions;
pub mod normalize;
pub mod sensitive;
