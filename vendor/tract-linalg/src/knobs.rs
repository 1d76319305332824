//! Architecture-detection knobs.
//!
//! These are declared unconditionally so they appear in the stack-wide knob
//! listing on every platform. Each is consumed only by the relevant
//! architecture's detection code (`arm64`, `arm32`, …) and is inert elsewhere.

tract_data::declare_knob!(
    TRACT_DOTPROD_DISABLE,
    bool,
    false,
    "aarch64: disable the FEAT_DotProd (SDOT/UDOT) kernels, forcing the SMLAL fallback."
);

tract_data::declare_knob!(
    TRACT_SVE_DISABLE,
    bool,
    false,
    "aarch64: disable SVE/SVE2 kernels, forcing the NEON path."
);

tract_data::declare_knob!(
    TRACT_SME_DISABLE,
    bool,
    false,
    "aarch64: disable SME kernels, forcing the SVE/NEON path."
);

tract_data::declare_knob!(
    TRACT_CPU_AARCH64_KIND,
    Option<String>,
    None,
    "aarch64: force the detected CPU family (a53/a55/a72/a73/a75/neoverse/applem) instead of probing."
);

tract_data::declare_knob!(
    TRACT_CPU_AARCH64_OVERRIDE_CPU_PART,
    Option<String>,
    None,
    "aarch64: force the raw CPU part id (e.g. 0xd03) before the kind-lookup table runs."
);

tract_data::declare_knob!(
    TRACT_CPU_ARM32_NEON,
    Option<bool>,
    None,
    "armv7: force NEON detection on/off instead of probing /proc/cpuinfo."
);

tract_data::declare_knob!(
    TRACT_AVX512_FMA_UNITS,
    Option<String>,
    None,
    "x86_64: force the 512-bit FMA-port count (1 or 2) instead of runtime-probing. The zmm VNNI 16x16 kernel is preferred over the ymm 8x8 only where there are two; both are available either way."
);

tract_data::declare_knob!(
    TRACT_AMX_BF16,
    bool,
    false,
    "x86_64: opt in to the lossy AMX bf16 kernel for f32 matmul (operands truncated to bf16, ~1/2^8 relative error per multiply). Off by default."
);

tract_data::declare_knob!(
    TRACT_CPU_ISA,
    Option<String>,
    None,
    "Edit the detected instruction-set features, comma-separated with +/- (e.g. '-sve2,+fp16'). Applies to every architecture; a removed feature takes its kernels out of the pool and the dispatch policies that would have named them."
);

tract_data::declare_knob!(
    TRACT_LLC_BYTES,
    String,
    String::new(),
    "Last-level cache size (e.g. `8M`, `33554432`) for SoCs whose OS does not expose it."
);

tract_data::declare_knob!(
    TRACT_LLC_CONTENDED,
    bool,
    false,
    "Treat the `TRACT_LLC_BYTES` cache as a contended system-level cache."
);

tract_data::declare_knob!(
    TRACT_MMM_CHUNK_SLACK_BYTES,
    Option<usize>,
    None,
    "Packed-operand footprint up to which a small-LLC part still splits a matmul in several chunks per thread."
);

tract_data::declare_knob!(
    TRACT_MMM_CHUNKS_PER_THREAD,
    Option<usize>,
    None,
    "Force the number of chunks per thread a multithreaded matmul is split in."
);

tract_data::declare_knob!(
    TRACT_RISCV64_TLB_REFRESH_FMAS,
    Option<usize>,
    None,
    "riscv64: matmul size, in multiply-adds, from which a TLB flush precedes the run. Unset applies the SpacemiT X60 default and does nothing elsewhere; 0 turns it off; any other value forces it on with that threshold."
);
