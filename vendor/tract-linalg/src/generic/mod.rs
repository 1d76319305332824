pub mod by_scalar;
pub mod erf;
pub mod exp;
pub mod gelu;
pub mod hardswish;
pub mod leaky_relu;
pub mod ln;
pub mod lut;
pub mod mmm;
pub mod reduce;
pub mod rms_norm;
pub mod rounding;
pub mod sigmoid;
pub mod silu;
pub mod tanh;
pub mod unicast;

pub use self::rounding::{ScaleShiftAndRound, Scaler};
