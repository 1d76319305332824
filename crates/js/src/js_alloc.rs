//! The wasm build's heap: Rust's own allocator (dlmalloc), growing linear memory in steps.
//!
//! On `wasm32-unknown-unknown` the standard library's allocator is dlmalloc, and it asks for
//! memory with `memory.grow` rounded up to one 64 KB page: every time its free space runs out
//! it grows by just what the allocation needs. In V8 each `memory.grow` costs ~0.3 ms whatever
//! its size (it replaces the memory's `ArrayBuffer` and reports the new external memory, which
//! can start a garbage collection): 6,000 one-page grows take 1.9 s in Node 20, 24 grows of
//! 16 MB 15 ms. Loading the embedding model allocates hundreds of MB, much of it in pieces
//! (protobuf fields, tokenizer tables, the graph), so those grows were a visible share of the
//! load: ~300 ms of `model.onnx`'s before its weights were dequantised in one pass, ~35 ms
//! after.
//!
//! This is the same dlmalloc, made with a system allocator that grows by at least a
//! thirty-second of the memory's current size, between 1 MB and 8 MB. Linear memory overshoots
//! what is used by at most one step (≤ 3.1 % of it, ≤ 8 MB), and a load makes tens of grows
//! instead of hundreds. Memory is never returned to the host on wasm, with either allocator.
//!
//! Only single-threaded builds use it (no `atomics` target feature): the heap is then only
//! ever touched by the one thread the instance runs on, so it needs no lock.

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::UnsafeCell;
use core::ptr;

const PAGE: usize = 64 * 1024;
/// The smallest grow, in pages (1 MB).
const MIN_STEP_PAGES: usize = 16;
/// The largest grow beyond what an allocation needs, in pages (8 MB).
const MAX_STEP_PAGES: usize = 128;

/// Pages to grow by when `needed` pages are missing and the memory holds `current`.
fn step_pages(needed: usize, current: usize) -> usize {
    needed.max((current / 32).clamp(MIN_STEP_PAGES, MAX_STEP_PAGES))
}

/// dlmalloc's source of memory: `memory.grow` in steps of [`step_pages`].
struct SteppedGrow;

// SAFETY: the methods below follow the contract of `dlmalloc::Allocator`: `alloc` returns a
// fresh region of at least `size` bytes (grown memory is zeroed, as `allocates_zeros` says) or
// null; nothing is ever released or remapped.
unsafe impl dlmalloc::Allocator for SteppedGrow {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let needed = size.div_ceil(PAGE);
        let current = wasm32::memory_size(0);
        let mut pages = step_pages(needed, current);
        let mut prev = wasm32::memory_grow(0, pages);
        if prev == usize::MAX && pages > needed {
            // Near the memory's limit: grow by just what is needed.
            pages = needed;
            prev = wasm32::memory_grow(0, pages);
        }
        if prev == usize::MAX {
            return (ptr::null_mut(), 0, 0);
        }
        let base = prev * PAGE;
        let len = pages * PAGE;
        // A region ending at the top of the 4 GB address space would make a pointer one past
        // its end wrap to 0; leave its last bytes out (as dlmalloc's own wasm allocator does).
        if base.wrapping_add(len) == 0 {
            return (base as *mut u8, len - 16, 0);
        }
        (base as *mut u8, len, 0)
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        ptr::null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _old: usize, _new: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        PAGE
    }
}

/// The global allocator of the wasm build.
pub struct SteppedHeap(UnsafeCell<dlmalloc::Dlmalloc<SteppedGrow>>);

// SAFETY: compiled only without the `atomics` target feature, where a wasm instance runs on one
// thread, so the heap is never accessed concurrently.
unsafe impl Sync for SteppedHeap {}

// SAFETY: every call forwards to dlmalloc with the layout's size and alignment, as its own
// `GlobalDlmalloc` does.
unsafe impl GlobalAlloc for SteppedHeap {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        (*self.0.get()).malloc(layout.size(), layout.align())
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        (*self.0.get()).calloc(layout.size(), layout.align())
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        (*self.0.get()).free(ptr, layout.size(), layout.align())
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        (*self.0.get()).realloc(ptr, layout.size(), layout.align(), new_size)
    }
}

#[global_allocator]
static HEAP: SteppedHeap =
    SteppedHeap(UnsafeCell::new(dlmalloc::Dlmalloc::new_with_allocator(SteppedGrow)));
