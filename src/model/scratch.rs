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
/// At most this many bytes kept per thread (the flash path's layer at T = 1024 uses about 50 MB).
#[cfg(not(target_arch = "wasm32"))]
const MAX_BYTES: usize = 512 << 20;

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static KEPT: std::cell::RefCell<Vec<Vec<f32>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `len` f32 for the caller to write, every one, before `assume_init`: natively the smallest kept
/// block that holds them and is at most twice as large (its old numbers still there, as far as the
/// type is concerned unwritten; a larger one would leave the pool with its spare room inside an
/// output that outlives the layer, such as the logits), else a fresh allocation.
pub fn take(len: usize) -> Vec<MaybeUninit<f32>> {
    #[cfg(not(target_arch = "wasm32"))]
    if len >= MIN_FLOATS {
        let kept = KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            let fits = |i: &usize| (len..=2 * len).contains(&kept[*i].capacity());
            let best = (0..kept.len()).filter(fits).min_by_key(|&i| kept[i].capacity());
            // `remove`, not `swap_remove`: the blocks stay oldest first, for `give` to drop.
            best.map(|i| kept.remove(i))
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

/// A block back for `take` to hand out again (natively; in wasm32 it is dropped). Past the pool's
/// limits the oldest blocks are dropped; a block over `MAX_BYTES` alone is dropped at once.
pub fn give(v: Vec<f32>) {
    #[cfg(not(target_arch = "wasm32"))]
    if (MIN_FLOATS..=MAX_BYTES / 4).contains(&v.capacity()) {
        KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            kept.push(v);
            let mut bytes = kept.iter().map(|b| b.capacity() * 4).sum::<usize>();
            while kept.len() > MAX_KEPT || bytes > MAX_BYTES {
                bytes -= kept.remove(0).capacity() * 4;
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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::model::attention::MaskSpec;
    use crate::model::block::{decoder_layer, LayerRun};
    use crate::model::kv_cache::KvCache;
    use crate::model::rope::RopeTable;
    use crate::model::Interventions;
    use crate::trace::Recorder;
    use crate::Config;

    fn kept() -> Vec<*const f32> {
        KEPT.with(|k| k.borrow().iter().map(|b| b.as_ptr()).collect())
    }

    /// The kept blocks whose first number is still NaN: poisoned blocks no call has written.
    fn unwritten() -> Vec<*const f32> {
        KEPT.with(|k| k.borrow().iter().filter(|b| b[0].is_nan()).map(|b| b.as_ptr()).collect())
    }

    /// A block handed back is handed out again to a request it holds, the smallest that does and
    /// none more than twice the request; small ones are not kept.
    #[test]
    fn blocks_come_back_to_requests_that_fit() {
        release();
        let (big, small) = (vec![1.0f32; MIN_FLOATS * 4], vec![2.0f32; MIN_FLOATS]);
        let (big_at, small_at) = (big.as_ptr(), small.as_ptr());
        give(big);
        give(small);
        give(vec![0.0; 10]);
        assert_eq!(kept(), vec![big_at, small_at], "a 10-float block is not kept");
        let again = take(MIN_FLOATS);
        assert_eq!((again.as_ptr() as *const f32, again.len()), (small_at, MIN_FLOATS), "the smallest that holds it");
        let fresh = take(MIN_FLOATS + 1);
        assert_ne!(fresh.as_ptr() as *const f32, big_at, "not a block over twice the request");
        let again = take(MIN_FLOATS * 3);
        assert_eq!((again.as_ptr() as *const f32, again.len()), (big_at, MIN_FLOATS * 3));
        assert_eq!(take(MIN_FLOATS * 8).len(), MIN_FLOATS * 8, "a fresh block when none holds it");
        let third = vec![3.0f32; MIN_FLOATS];
        let third_at = third.as_ptr();
        give(third);
        let small_request = take(MIN_FLOATS - 1);
        assert_ne!(small_request.as_ptr() as *const f32, third_at, "a request under MIN_FLOATS is not served from the pool");
        release();
        assert!(kept().is_empty());
    }

    /// Past the count or the bytes the oldest blocks go (a take in between keeps the order), and a
    /// block over the byte limit alone is dropped without emptying the pool. The large blocks are
    /// only reserved, never touched.
    #[test]
    fn the_oldest_go_first_and_the_limits_hold() {
        release();
        let blocks: Vec<Vec<f32>> = (0..MAX_KEPT + 2).map(|_| Vec::with_capacity(MIN_FLOATS)).collect();
        let at: Vec<*const f32> = blocks.iter().map(|b| b.as_ptr()).collect();
        blocks.into_iter().for_each(give);
        assert_eq!(kept(), at[2..], "the two oldest dropped");
        let taken = take(MIN_FLOATS); // the oldest kept one, at[2]
        assert_eq!(taken.as_ptr() as *const f32, at[2]);
        give(Vec::with_capacity(MIN_FLOATS));
        assert_eq!(kept()[0], at[3], "the order is kept across a take");
        give(Vec::with_capacity(MAX_BYTES / 4 + 1));
        assert_eq!(kept().len(), MAX_KEPT, "a block over the byte limit is dropped alone");
        release();
        let third = MAX_BYTES / 4 / 3;
        let big: Vec<Vec<f32>> = (0..4).map(|_| Vec::with_capacity(third)).collect();
        let big_at: Vec<*const f32> = big.iter().map(|b| b.as_ptr()).collect();
        big.into_iter().for_each(give);
        assert_eq!(kept(), big_at[1..], "four thirds of the byte limit: the oldest goes");
        release();
    }

    /// A layer given blocks full of NaN computes the same bits as one given fresh memory: every
    /// output taken from the pool is written before it is read. T = 96 on MiniMind-3's shapes puts
    /// the norms, q and the FFN's products in pooled blocks.
    #[test]
    fn blocks_full_of_nan_change_no_number() {
        let cfg = Config { num_hidden_layers: 1, ..Config::default() }.resolve().unwrap();
        let w = crate::weights::random(&cfg, 7);
        let t = 96;
        let x = crate::weights::random(&Config { vocab_size: t, ..cfg.clone() }, 8).embed_tokens.to_array().into_owned();
        let rope = RopeTable::new(&cfg, 0, t);
        let run_layer = |flash_tile| {
            let run = LayerRun {
                layer: 0,
                rope: &rope,
                mask: MaskSpec { causal: true, prefix_len: 0, padding: None },
                flash_tile,
                probe: None,
                interventions: &Interventions::default(),
                keep_context: false,
            };
            let mut cache = KvCache::new(&cfg);
            decoder_layer(&cfg, &w.layers[0], x.clone(), &mut cache.layers[0], &run, &mut Recorder::off()).x
        };
        for flash_tile in [None, Some(32)] {
            release();
            let clean = run_layer(flash_tile);
            release();
            let (h, i) = (t * cfg.hidden_size, t * cfg.intermediate_size());
            assert!(h >= MIN_FLOATS && i >= MIN_FLOATS);
            let poisoned: Vec<Vec<f32>> = [h; 6].into_iter().chain([i; 4]).map(|n| vec![f32::NAN; n]).collect();
            let poisoned_at: Vec<*const f32> = poisoned.iter().map(|b| b.as_ptr()).collect();
            poisoned.into_iter().for_each(give);
            let dirty = run_layer(flash_tile);
            // A poisoned block was used if it is no longer kept, or kept again with numbers written.
            let untouched = unwritten();
            let used = poisoned_at.iter().filter(|p| !untouched.contains(p)).count();
            assert!(used >= 6, "the layer took {used} of the 10 poisoned blocks");
            assert!(dirty.iter().zip(&clean).all(|(a, b)| a.to_bits() == b.to_bits()), "{flash_tile:?}: a pooled block's old numbers reached the output");
        }
        release();
    }
}
