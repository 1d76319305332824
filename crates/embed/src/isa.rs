//! One switch for every fast path of the embedder: `MNEMO_ISA`.
//!
//! `MNEMO_ISA=portable`, `avx2` or `avx512` caps the instruction set of the embedder's own
//! x86_64 code (the fused attention's AVX-512 and AVX2 paths) and sets tract's
//! `TRACT_CPU_ISA` knob to match, so tract's kernels (GEMM tiles, the row softmax, GELU) are
//! held to the same level:
//!
//! | `MNEMO_ISA` | the embedder's paths | tract (`TRACT_CPU_ISA`) |
//! |---|---|---|
//! | unset, `avx512` | the best the CPU has | as probed |
//! | `avx2` | AVX2 + FMA at most | `-avx512f,-avx512vnni,-avx512fp16,-amx-int8,-amx-bf16` |
//! | `portable` | portable Rust only | also `-avx2,-fma,-avxvnni,-avx,-f16c` (SSE kernels stay: every x86_64 has them) |
//!
//! A `TRACT_CPU_ISA` the user set is kept, with these removals after it. The switch is read
//! once per process, when the first model is loaded ([`apply`]): tract probes the CPU once. A
//! path also runs only where the CPU has it, whatever the switch says. On wasm (simd128 is
//! part of the build) and other architectures it changes nothing.

use std::sync::OnceLock;

/// An instruction-set level the switch can hold the embedder to, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// No hand-written vector code of ours; tract's SSE kernels only.
    Portable,
    /// AVX2 and FMA at most.
    Avx2,
    /// Whatever the CPU has (AVX-512 included).
    Avx512,
}

impl Level {
    /// `portable`, `avx2` or `avx512`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "portable" => Ok(Level::Portable),
            "avx2" => Ok(Level::Avx2),
            "avx512" | "" => Ok(Level::Avx512),
            other => Err(format!("MNEMO_ISA={other:?} is not one of portable, avx2, avx512")),
        }
    }

    /// The features this level takes from tract (`TRACT_CPU_ISA` tokens).
    fn tract_removals(self) -> &'static str {
        match self {
            Level::Avx512 => "",
            Level::Avx2 => "-avx512f,-avx512vnni,-avx512fp16,-amx-int8,-amx-bf16",
            Level::Portable => {
                "-avx512f,-avx512vnni,-avx512fp16,-amx-int8,-amx-bf16,-avx2,-fma,-avxvnni,-avx,-f16c"
            }
        }
    }
}

static CAP: OnceLock<Result<Level, String>> = OnceLock::new();

/// The level `MNEMO_ISA` sets (read once), or why its value is not one.
fn read() -> &'static Result<Level, String> {
    CAP.get_or_init(|| match std::env::var("MNEMO_ISA") {
        Ok(v) => Level::parse(&v),
        Err(_) => Ok(Level::Avx512),
    })
}

/// The cap in force: `MNEMO_ISA`'s level (the highest when unset or not one; [`apply`] reports
/// a bad value).
pub fn cap() -> Level {
    read().clone().unwrap_or(Level::Avx512)
}

/// Reads `MNEMO_ISA` and holds tract to the same level (before tract probes the CPU: call it
/// before a model is built). A value that is not a level is an error that says which are.
pub fn apply() -> Result<Level, String> {
    let level = read().clone()?;
    static APPLIED: OnceLock<()> = OnceLock::new();
    APPLIED.get_or_init(|| {
        let removals = level.tract_removals();
        if removals.is_empty() {
            return;
        }
        let knob = &tract_onnx::tract_core::tract_linalg::knobs::TRACT_CPU_ISA;
        let spec = match knob.get() {
            Some(user) if !user.trim().is_empty() => format!("{user},{removals}"),
            _ => removals.to_string(),
        };
        knob.set(Some(spec));
    });
    Ok(level)
}

/// Whether the embedder's AVX-512F paths may run: the cap allows them, tract's view of the CPU
/// (which `TRACT_CPU_ISA` edits) has the feature, and so does the CPU itself.
#[cfg(target_arch = "x86_64")]
pub fn avx512f() -> bool {
    use tract_onnx::tract_core::tract_linalg::isa::{native, Isa};
    cap() >= Level::Avx512
        && native().has(Isa::X86_64Avx512f)
        && std::arch::is_x86_feature_detected!("avx512f")
}

/// Whether the embedder's AVX2 + FMA paths may run (as [`avx512f`]).
#[cfg(target_arch = "x86_64")]
pub fn avx2_fma() -> bool {
    use tract_onnx::tract_core::tract_linalg::isa::{native, Isa};
    cap() >= Level::Avx2
        && native().has(Isa::X86_64Avx2)
        && native().has(Isa::X86_64Fma)
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_order() {
        assert_eq!(Level::parse("AVX2"), Ok(Level::Avx2));
        assert_eq!(Level::parse(" portable "), Ok(Level::Portable));
        assert_eq!(Level::parse("avx512"), Ok(Level::Avx512));
        assert!(Level::parse("sse4").unwrap_err().contains("portable, avx2, avx512"));
        assert!(Level::Portable < Level::Avx2 && Level::Avx2 < Level::Avx512);
        assert!(Level::Avx2.tract_removals().contains("-avx512f"));
        assert!(!Level::Avx2.tract_removals().contains("-avx2"));
        assert!(Level::Portable.tract_removals().contains("-fma"));
    }
}
