//! Q4_0 weights to the f32 panels `wasm_f32_4x8` reads, one panel of 4 rows at a time.
//!
//! With this extractor a Q4_0 matrix (4.5 bits a weight) stays Q4_0 in memory and runs on the
//! f32 GEMM kernel: each panel is widened to f32 into a scratch buffer just before the tiles
//! that read it, so only one panel is ever held as f32. Without it wasm had no kernel for
//! Q4_0 but the portable scalar one.
//!
//! Input, per block of 32 k: the 4 rows' f16 scales, then for each k the 4 rows' nibbles, two
//! a byte, low nibble first (`PackedBlockQuantFormat::new(&Q4_0, 4, 0, false)`). Output: f32
//! `[k][4]`, row `r` of step `k` being `(nibble − 8) × scale[r]`.

use crate::block_quant::{PackedBlockQuantFormat, Q4_0};
use crate::pack::Packing;
use tract_data::internal::*;

panel_extractor!(wasm32; kernel_packed_4_q40_to_f32 as packed_4_q40_to_f32(
    Box::new(PackedBlockQuantFormat::new(&Q4_0, 4, 0, false)),
    f32::packing(4).align(16)
));

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub unsafe fn kernel_packed_4_q40_to_f32(input: *const u8, output: *mut u8, k: usize) {
    use std::arch::wasm32::*;
    unsafe {
        let mut input = input;
        let mut output = output as *mut v128;
        let mask = u8x16_splat(0x0F);
        let eight = f32x4_splat(8.0);
        for _ in 0..k / 32 {
            let s = input as *const u16;
            let scales = f32x4(
                f16::from_bits(s.read_unaligned()).to_f32(),
                f16::from_bits(s.add(1).read_unaligned()).to_f32(),
                f16::from_bits(s.add(2).read_unaligned()).to_f32(),
                f16::from_bits(s.add(3).read_unaligned()).to_f32(),
            );
            input = input.add(8);
            // 64 bytes of nibbles: 16 bytes hold 8 k-steps of 4 rows.
            for _ in 0..4 {
                let bytes = v128_load(input as *const v128);
                input = input.add(16);
                let lo = v128_and(bytes, mask);
                let hi = u8x16_shr(bytes, 4);
                // Rows in order: byte b holds rows (2b mod 4, 2b mod 4 + 1) as (low, high).
                let first = i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(
                    lo, hi,
                );
                let second = i8x16_shuffle::<
                    8,
                    24,
                    9,
                    25,
                    10,
                    26,
                    11,
                    27,
                    12,
                    28,
                    13,
                    29,
                    14,
                    30,
                    15,
                    31,
                >(lo, hi);
                for half in [first, second] {
                    let w16lo = u16x8_extend_low_u8x16(half);
                    let w16hi = u16x8_extend_high_u8x16(half);
                    for w in [
                        u32x4_extend_low_u16x8(w16lo),
                        u32x4_extend_high_u16x8(w16lo),
                        u32x4_extend_low_u16x8(w16hi),
                        u32x4_extend_high_u16x8(w16hi),
                    ] {
                        let v = f32x4_mul(f32x4_sub(f32x4_convert_i32x4(w), eight), scales);
                        v128_store(output, v);
                        output = output.add(1);
                    }
                }
            }
        }
    }
}

bail_stub!(wasm32; pub unsafe fn kernel_packed_4_q40_to_f32(*const u8, *mut u8, usize));
