//! Buffers for the forward pass's large intermediates (a layer's activations, `[T, 2432]` each for
//! MiniMind-3's FFN), handed back when a layer is done with them and handed out again to the next
//! product, norm or RoPE that needs as many numbers.
//!
//! Natively this is where a layer's time went at long inputs: glibc gives a large freed block back
//! to the kernel (a fresh mapping, or the top of the heap trimmed), so every call's outputs were
//! faulted in again page by page (T = 1024 on AMD Zen 5: 0.79x the layer's time with the pages
//! kept; BENCHMARKS.md section 1). The pool keeps the blocks instead: per thread, at most `MAX_KEPT`
//! of them and `MAX_BYTES` in all, the oldest dropped past that; blocks under `MIN_FLOATS` go back
//! to the allocator, which keeps such small ones itself.
//!
//! In wasm32 memory is never given back to the browser, so there is nothing to save, and a pool
//! would only keep blocks from other uses (the tab's memory budget counts what the core holds): there
//! `take` is a fresh allocation and `give` drops.

use std::mem::{ManuallyDrop, MaybeUninit};

use ndarray::{Array, Dimension};

/// Blocks smaller than this many f32 (256 KiB) are not kept.
#[cfg(not(target_arch = "wasm32"))]
const MIN_FLOATS: usize = 1 << 16;
/// At most this many blocks kept per thread: a MiniMind layer hands back about a dozen.
#[cfg(not(target_arch = "wasm32"))]
const MAX_KEPT: usize = 24;
/// At most this many bytes kept per thread (the flash path's layer at T = 1024 peaks at 64 MB).
#[cfg(not(target_arch = "wasm32"))]
const MAX_BYTES: usize = 512 << 20;

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static KEPT: std::cell::RefCell<Vec<Vec<f32>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `len` f32 for the caller to write, every one, before `assume_init`: natively the smallest kept
/// block that holds them (its old numbers still there, as far as the type is concerned unwritten),
/// else a fresh allocation.
pub fn take(len: usize) -> Vec<MaybeUninit<f32>> {
    #[cfg(not(target_arch = "wasm32"))]
    if len >= MIN_FLOATS {
        let kept = KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            let best = (0..kept.len()).filter(|&i| kept[i].capacity() >= len).min_by_key(|&i| kept[i].capacity());
            best.map(|i| kept.swap_remove(i))
        });
        if let Some(block) = kept {
            let mut block = ManuallyDrop::new(block);
            // SAFETY: the pointer and capacity are a live Vec<f32>'s, given up here (ManuallyDrop);
            // MaybeUninit<f32> has f32's size and alignment, and `len` entries of MaybeUninit need
            // no initialisation, len <= capacity.
            return unsafe { Vec::from_raw_parts(block.as_mut_ptr() as *mut MaybeUninit<f32>, len, block.capacity()) };
        }
    }
    let mut fresh = Vec::with_capacity(len);
    // SAFETY: MaybeUninit entries need no initialisation, and the capacity is `len`.
    unsafe { fresh.set_len(len) };
    fresh
}

/// The vector `take` handed out, now written.
///
/// # Safety
/// Every entry of `v` must have been written.
pub unsafe fn assume_init(v: Vec<MaybeUninit<f32>>) -> Vec<f32> {
    let mut v = ManuallyDrop::new(v);
    // SAFETY: the caller wrote every one of the `len` entries; the pointer and capacity are a live
    // Vec's, given up here, with f32's layout.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut f32, v.len(), v.capacity()) }
}

/// A block back for `take` to hand out again (natively; in wasm32 it is dropped).
pub fn give(v: Vec<f32>) {
    #[cfg(not(target_arch = "wasm32"))]
    if v.capacity() >= MIN_FLOATS {
        KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            kept.push(v);
            let bytes = |kept: &Vec<Vec<f32>>| kept.iter().map(|b| b.capacity() * 4).sum::<usize>();
            while kept.len() > MAX_KEPT || bytes(&kept) > MAX_BYTES {
                kept.remove(0);
            }
        });
    }
    #[cfg(target_arch = "wasm32")]
    drop(v);
}

/// Drops every block this thread keeps (a bench measuring a call's peak memory starts from none).
pub fn release() {
    #[cfg(not(target_arch = "wasm32"))]
    KEPT.with(|kept| kept.borrow_mut().clear());
}

/// An array's storage back, as `give`.
pub fn recycle<D: Dimension>(a: Array<f32, D>) {
    give(a.into_raw_vec_and_offset().0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block handed back is handed out again to a request it holds, the smallest that does; small
    /// ones are not kept; the pool stays within its count.
    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn blocks_come_back() {
        release();
        let (big, small) = (vec![1.0f32; MIN_FLOATS * 4], vec![2.0f32; MIN_FLOATS]);
        let (big_at, small_at) = (big.as_ptr(), small.as_ptr());
        give(big);
        give(small);
        give(vec![0.0; 10]);
        assert_eq!(KEPT.with(|k| k.borrow().len()), 2, "a 10-float block is not kept");
        let again = take(MIN_FLOATS);
        assert_eq!((again.as_ptr() as *const f32, again.len()), (small_at, MIN_FLOATS), "the smallest that holds it");
        let again = take(MIN_FLOATS * 2);
        assert_eq!(again.as_ptr() as *const f32, big_at);
        assert_eq!(take(MIN_FLOATS * 8).len(), MIN_FLOATS * 8, "a fresh block when none holds it");
        let third = vec![3.0f32; MIN_FLOATS];
        let third_at = third.as_ptr();
        give(third);
        assert_ne!(take(MIN_FLOATS - 1).as_ptr() as *const f32, third_at, "a request under MIN_FLOATS is not served from the pool");
        for _ in 0..MAX_KEPT + 5 {
            give(Vec::with_capacity(MIN_FLOATS));
        }
        assert_eq!(KEPT.with(|k| k.borrow().len()), MAX_KEPT);
        release();
        assert_eq!(KEPT.with(|k| k.borrow().len()), 0);
    }
}
