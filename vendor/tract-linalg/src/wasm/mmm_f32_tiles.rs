//! WASM SIMD f32 GEMM kernels sized for the 15 vector registers V8 gives wasm on x86_64.
//!
//! V8 maps wasm `v128` values onto xmm registers and keeps one of the sixteen as its scratch
//! register, so a kernel holding more than about 12 accumulators spills inside its inner loop on
//! every x86_64 machine (`wasm_f32_8x8` and `wasm_f32_4x16` hold 16). These tiles keep
//! MR × NR/4 accumulators plus the NR/4 B vectors and one broadcast A value in registers:
//! 4×8, 8 accumulators: the tile XNNPACK ships for wasm SIMD on x86. Wider tiles measured
//! slower under V8 on x86_64 (5×8, 6×8, 3×16, 8×4 and the 16-accumulator kernels).
//!
//! A is packed `[k][MR]` and each value is broadcast either by a lane shuffle of a v128 load
//! (`SHUF`, MR a multiple of 4) or with `v128.load32_splat`; B is packed `[k][NR]` and loaded
//! as NR/4 vectors.
//! One generic body serves every tile; the fused ops are the same as `wasm_f32_4x16`'s.

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use crate::Scaler;
use crate::mmm::FusedKerSpec;

/// One kernel body for an `MR` × `4·NV` tile.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
unsafe fn kernel_tile<const MR: usize, const NV: usize, const ACC: usize, const SHUF: bool>(
    mut pnl: *const FusedKerSpec<f32>,
) -> isize {
    use std::arch::wasm32::*;

    unsafe {
        let mut acc = [f32x4_splat(0.0); ACC];
        macro_rules! each {
            (|$v:ident| $e:expr) => {{
                for $v in acc.iter_mut() {
                    *$v = $e;
                }
            }};
        }
        macro_rules! per_row {
            ($rows:expr, |$s:ident, $v:ident| $e:expr) => {{
                for r in 0..MR {
                    let $s = f32x4_splat(*$rows.add(r));
                    for j in 0..NV {
                        let $v = acc[r * NV + j];
                        acc[r * NV + j] = $e;
                    }
                }
            }};
        }
        macro_rules! per_col {
            ($cols:expr, |$c:ident, $v:ident| $e:expr) => {{
                let p = $cols as *const v128;
                for r in 0..MR {
                    for j in 0..NV {
                        let $c = v128_load(p.add(j));
                        let $v = acc[r * NV + j];
                        acc[r * NV + j] = $e;
                    }
                }
            }};
        }

        loop {
            if pnl.is_null() {
                break;
            }
            match *pnl {
                FusedKerSpec::Done => break,
                FusedKerSpec::Clear => acc = [f32x4_splat(0.0); ACC],
                FusedKerSpec::LoadTile(_cols, rows) => {
                    let p = rows as *const v128;
                    for (i, v) in acc.iter_mut().enumerate() {
                        *v = v128_load(p.add(i));
                    }
                }
                FusedKerSpec::ScalarMin(a) => each!(|v| f32x4_min(f32x4_splat(a), *v)),
                FusedKerSpec::ScalarMax(a) => each!(|v| f32x4_max(f32x4_splat(a), *v)),
                FusedKerSpec::ScalarAdd(a) => each!(|v| f32x4_add(f32x4_splat(a), *v)),
                FusedKerSpec::ScalarMul(a) => each!(|v| f32x4_mul(f32x4_splat(a), *v)),
                FusedKerSpec::ScalarSub(a) => each!(|v| f32x4_sub(f32x4_splat(a), *v)),
                FusedKerSpec::ScalarSubF(a) => each!(|v| f32x4_sub(*v, f32x4_splat(a))),
                FusedKerSpec::LeakyRelu(a) => {
                    let s = f32x4_splat(a);
                    let zero = f32x4_splat(0.0);
                    each!(|v| v128_bitselect(*v, f32x4_mul(s, *v), f32x4_gt(*v, zero)))
                }
                FusedKerSpec::PerRowMin(rows) => per_row!(rows, |s, v| f32x4_min(s, v)),
                FusedKerSpec::PerRowMax(rows) => per_row!(rows, |s, v| f32x4_max(s, v)),
                FusedKerSpec::PerRowAdd(rows) => per_row!(rows, |s, v| f32x4_add(s, v)),
                FusedKerSpec::PerRowMul(rows) => per_row!(rows, |s, v| f32x4_mul(s, v)),
                FusedKerSpec::PerRowSub(rows) => per_row!(rows, |s, v| f32x4_sub(s, v)),
                FusedKerSpec::PerRowSubF(rows) => per_row!(rows, |s, v| f32x4_sub(v, s)),
                FusedKerSpec::PerColMin(cols) => per_col!(cols, |c, v| f32x4_min(c, v)),
                FusedKerSpec::PerColMax(cols) => per_col!(cols, |c, v| f32x4_max(c, v)),
                FusedKerSpec::PerColAdd(cols) => per_col!(cols, |c, v| f32x4_add(c, v)),
                FusedKerSpec::PerColMul(cols) => per_col!(cols, |c, v| f32x4_mul(c, v)),
                FusedKerSpec::PerColSub(cols) => per_col!(cols, |c, v| f32x4_sub(c, v)),
                FusedKerSpec::PerColSubF(cols) => per_col!(cols, |c, v| f32x4_sub(v, c)),
                FusedKerSpec::QScale(shift, rp, mult) => {
                    let s = f32x4_splat(Scaler::from_fuse_params(shift, rp, mult).scale);
                    each!(|v| f32x4_mul(s, *v))
                }
                FusedKerSpec::RoundingShiftRight(shift, _rp) => {
                    let s = f32x4_splat(2f32.powi(-(shift as i32)));
                    each!(|v| f32x4_mul(s, *v))
                }
                FusedKerSpec::ShiftLeft(shift) => {
                    let s = f32x4_splat(2f32.powi(shift as i32));
                    each!(|v| f32x4_mul(s, *v))
                }
                FusedKerSpec::AddRowColProducts(rows, cols) => {
                    let p = cols as *const v128;
                    for r in 0..MR {
                        let rv = f32x4_splat(*rows.add(r));
                        for j in 0..NV {
                            let c = v128_load(p.add(j));
                            let v = acc[r * NV + j];
                            acc[r * NV + j] = madd_f32x4!(v, rv, c);
                        }
                    }
                }
                FusedKerSpec::AddUnicast(tile) => {
                    let mut ptr: *const u8 = tile.ptr;
                    let cs = tile.col_byte_stride;
                    for r in 0..MR {
                        for j in 0..NV {
                            let c = (j * 4) as isize;
                            let m = if cs == 4 {
                                v128_load(ptr.offset(4 * c) as *const v128)
                            } else {
                                f32x4(
                                    *(ptr.offset(cs * c) as *const f32),
                                    *(ptr.offset(cs * (c + 1)) as *const f32),
                                    *(ptr.offset(cs * (c + 2)) as *const f32),
                                    *(ptr.offset(cs * (c + 3)) as *const f32),
                                )
                            };
                            acc[r * NV + j] = f32x4_add(m, acc[r * NV + j]);
                        }
                        ptr = ptr.add(tile.row_byte_stride as usize);
                    }
                }
                FusedKerSpec::Store(tile) => {
                    let mut ptr: *mut u8 = tile.ptr;
                    let cs = tile.col_byte_stride;
                    for r in 0..MR {
                        for j in 0..NV {
                            let v = acc[r * NV + j];
                            let c = (j * 4) as isize;
                            if cs == 4 {
                                v128_store(ptr.offset(4 * c) as *mut v128, v);
                            } else {
                                *(ptr.offset(cs * c) as *mut f32) = f32x4_extract_lane::<0>(v);
                                *(ptr.offset(cs * (c + 1)) as *mut f32) =
                                    f32x4_extract_lane::<1>(v);
                                *(ptr.offset(cs * (c + 2)) as *mut f32) =
                                    f32x4_extract_lane::<2>(v);
                                *(ptr.offset(cs * (c + 3)) as *mut f32) =
                                    f32x4_extract_lane::<3>(v);
                            }
                        }
                        ptr = ptr.add(tile.row_byte_stride as usize);
                    }
                }
                FusedKerSpec::AddMatMul { k, pa, pb, packing: _ } => {
                    let a = pa as *const f32;
                    let b = pb as *const v128;
                    for i in 0..k {
                        let ak = a.add(MR * i);
                        let bk = b.add(NV * i);
                        let mut bv = [f32x4_splat(0.0); NV];
                        for (j, v) in bv.iter_mut().enumerate() {
                            *v = v128_load(bk.add(j));
                        }
                        if SHUF {
                            for q in 0..MR / 4 {
                                let a4 = v128_load(ak.add(4 * q) as *const v128);
                                for l in 0..4 {
                                    let s = match l {
                                        0 => i32x4_shuffle::<0, 0, 0, 0>(a4, a4),
                                        1 => i32x4_shuffle::<1, 1, 1, 1>(a4, a4),
                                        2 => i32x4_shuffle::<2, 2, 2, 2>(a4, a4),
                                        _ => i32x4_shuffle::<3, 3, 3, 3>(a4, a4),
                                    };
                                    let r = 4 * q + l;
                                    for j in 0..NV {
                                        let v = acc[r * NV + j];
                                        acc[r * NV + j] = madd_f32x4!(v, s, bv[j]);
                                    }
                                }
                            }
                        } else {
                            for r in 0..MR {
                                let s = v128_load32_splat(ak.add(r) as *const u32);
                                for j in 0..NV {
                                    let v = acc[r * NV + j];
                                    acc[r * NV + j] = madd_f32x4!(v, s, bv[j]);
                                }
                            }
                        }
                    }
                }
            }
            pnl = pnl.add(1);
        }
        0
    }
}

macro_rules! tile_kernel {
    ($func:ident, $mr:literal, $nv:literal, $shuf:expr) => {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        unsafe fn $func(pnl: *const FusedKerSpec<f32>) -> isize {
            unsafe { kernel_tile::<$mr, $nv, { $mr * $nv }, $shuf>(pnl) }
        }
        bail_stub!(wasm32; unsafe fn $func(*const FusedKerSpec<f32>) -> isize);
    };
}

// A is broadcast with `v128.load32_splat` per row in both builds. Under Node 20 on a Zen 3 EPYC
// a lane shuffle of one v128 load per k (SHUF) measured faster without relaxed-simd, 28-29
// against 25-28 GFLOP/s; on an AVX-512 Xeon with AMX the splat is the faster by more, 36-39
// against 30 (tools/bench-kernels), probably because its shuffles issue on a port the vector
// adds also need, while a splat is a load. Both broadcast the same values, so the results are identical.
// With relaxed madd the splat measured 44-46 against 38-40 on the EPYC; `wasm_f32_8x8` runs
// at 17 in both builds.
tile_kernel!(kernel_f32_4x8, 4, 2, false);

MMMRustKernel!(wasm32; kernel_f32_4x8 => wasm_f32_4x8<f32>(4,8)@(16,16));
