//! One submission's worth of GPU work, planned before anything is encoded: a list of kernel dispatches
//! and read-back copies, then one encoder, one submit, and one batch of `map_async` at the end.
//!
//! Planning first is what lets read-backs be cheap and exact: a tensor the trace wants is copied out of
//! its working buffer right after the kernel that wrote it (later kernels reuse that buffer), into a
//! read-back region whose size is only known once the whole plan is; each dispatch's parameters go into
//! one uniform buffer at the device's offset alignment (queue writes land before the submit, so a single
//! parameter buffer rewritten between dispatches would give every dispatch the last values).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::device::{gpu_err, ErrorScopes, Gpu};
use crate::Error;

/// Bytes of parameters one dispatch may pass: 16 u32 / f32 words.
pub(crate) const PARAM_WORDS: usize = 16;

/// A dispatch's parameters, in the order of the kernel's `Params` struct.
#[derive(Clone, Copy)]
pub(crate) enum Word {
    U(u32),
    F(f32),
}

/// A region of the read-back, by index; its bytes come back as one `Vec<f32>`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tap(usize);

impl Tap {
    /// Its position in what `run` returns.
    pub(crate) fn index(self) -> usize {
        self.0
    }
}

enum Op<'a> {
    Dispatch { pipeline: &'a wgpu::ComputePipeline, params: usize, buffers: Vec<wgpu::Buffer>, groups: [u32; 2] },
    Copy { src: wgpu::Buffer, src_offset: u64, tap: Tap, tap_offset: u64, bytes: u64 },
}

pub(crate) struct Program<'a> {
    pub(crate) gpu: &'a Gpu,
    ops: Vec<Op<'a>>,
    params: Vec<[u32; PARAM_WORDS]>,
    taps: Vec<u64>,
}

impl<'a> Program<'a> {
    pub(crate) fn new(gpu: &'a Gpu) -> Program<'a> {
        Program { gpu, ops: Vec::new(), params: Vec::new(), taps: Vec::new() }
    }

    /// Runs `pipeline` over `groups` workgroups (laid out 2-D past 65535, which the kernels unfold),
    /// with `params` at binding 0 and `buffers`, whole, at bindings 1, 2, ...
    pub(crate) fn dispatch(&mut self, pipeline: &'a wgpu::ComputePipeline, params: &[Word], buffers: &[&wgpu::Buffer], groups: u64) {
        let max = self.gpu.limits.max_compute_workgroups_per_dimension.max(1) as u64;
        let grid = if groups <= max { [groups as u32, 1] } else { [max as u32, groups.div_ceil(max) as u32] };
        self.dispatch_grid(pipeline, params, buffers, grid);
    }

    /// As `dispatch`, over an explicit 2-D grid of workgroups.
    pub(crate) fn dispatch_grid(&mut self, pipeline: &'a wgpu::ComputePipeline, params: &[Word], buffers: &[&wgpu::Buffer], groups: [u32; 2]) {
        debug_assert!(params.len() <= PARAM_WORDS);
        let mut words = [0u32; PARAM_WORDS];
        for (w, p) in words.iter_mut().zip(params) {
            *w = match *p {
                Word::U(u) => u,
                Word::F(f) => f.to_bits(),
            };
        }
        self.params.push(words);
        let buffers = buffers.iter().map(|&b| b.clone()).collect();
        self.ops.push(Op::Dispatch { pipeline, params: self.params.len() - 1, buffers, groups });
    }

    /// Reserves a read-back region of `elems` f32.
    pub(crate) fn tap(&mut self, elems: usize) -> Tap {
        self.taps.push(elems as u64 * 4);
        Tap(self.taps.len() - 1)
    }

    /// Copies `elems` f32 from element `src_offset` of `src` into the region at element `tap_offset`.
    pub(crate) fn copy(&mut self, src: &wgpu::Buffer, src_offset: usize, tap: Tap, tap_offset: usize, elems: usize) {
        if elems > 0 {
            let (src_offset, tap_offset, bytes) = (src_offset as u64 * 4, tap_offset as u64 * 4, elems as u64 * 4);
            self.ops.push(Op::Copy { src: src.clone(), src_offset, tap, tap_offset, bytes });
        }
    }

    /// Reserves a region and copies `elems` f32 from `src` into it.
    pub(crate) fn read(&mut self, src: &wgpu::Buffer, src_offset: usize, elems: usize) -> Tap {
        let tap = self.tap(elems);
        self.copy(src, src_offset, tap, 0, elems);
        tap
    }

    /// Encodes, submits, and reads every region back: one `Vec<f32>` per tap, in tap order.
    pub(crate) async fn run(self) -> Result<Vec<Vec<f32>>, Error> {
        let gpu = self.gpu;
        gpu.check()?;
        let device = &gpu.device;
        let scopes = ErrorScopes::push(device);

        // Parameters, one aligned block per dispatch.
        let stride = (gpu.limits.min_uniform_buffer_offset_alignment as usize).max(PARAM_WORDS * 4);
        let mut bytes = vec![0u8; stride * self.params.len().max(1)];
        for (i, words) in self.params.iter().enumerate() {
            bytes[i * stride..i * stride + PARAM_WORDS * 4].copy_from_slice(bytemuck::cast_slice(words));
        }
        let params = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor { label: Some("params"), contents: &bytes, usage: wgpu::BufferUsages::UNIFORM },
        );

        // Read-back regions packed into as few mappable buffers as the device allows.
        let max_buffer = gpu.limits.max_buffer_size;
        let mut place = Vec::with_capacity(self.taps.len()); // (staging buffer, byte offset)
        let mut sizes: Vec<u64> = Vec::new();
        for &b in &self.taps {
            if b > max_buffer {
                return Err(Error::Gpu(format!("one traced tensor needs {:.1} MB; this GPU maps at most {:.1} MB", b as f64 / 1e6, max_buffer as f64 / 1e6)));
            }
            let last = sizes.len().wrapping_sub(1);
            match sizes.last_mut() {
                // A mapped range must start at a multiple of MAP_ALIGNMENT (8 bytes).
                Some(used) if used.next_multiple_of(wgpu::MAP_ALIGNMENT) + b <= max_buffer => {
                    let start = used.next_multiple_of(wgpu::MAP_ALIGNMENT);
                    place.push((last, start));
                    *used = start + b;
                }
                _ => {
                    place.push((sizes.len(), 0));
                    sizes.push(b);
                }
            }
        }
        let staging: Vec<wgpu::Buffer> = sizes
            .iter()
            .map(|&size| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("read-back"),
                    size: size.max(4),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();

        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("attnscope") });
        let mut ops = self.ops.iter().peekable();
        while let Some(op) = ops.next() {
            match op {
                Op::Copy { src, src_offset, tap, tap_offset, bytes } => {
                    let (buf, base) = place[tap.0];
                    encoder.copy_buffer_to_buffer(src, *src_offset, &staging[buf], base + tap_offset, *bytes);
                }
                Op::Dispatch { .. } => {
                    // Consecutive dispatches share a pass; each dispatch is its own usage scope.
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
                    let mut next = Some(op);
                    while let Some(Op::Dispatch { pipeline, params: pi, buffers, groups }) = next {
                        let mut entries = vec![wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &params,
                                offset: (*pi * stride) as u64,
                                size: std::num::NonZeroU64::new(PARAM_WORDS as u64 * 4),
                            }),
                        }];
                        entries.extend(buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry {
                            binding: i as u32 + 1,
                            resource: b.as_entire_binding(),
                        }));
                        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                            label: None,
                            layout: &pipeline.get_bind_group_layout(0),
                            entries: &entries,
                        });
                        pass.set_pipeline(pipeline);
                        pass.set_bind_group(0, &group, &[]);
                        pass.dispatch_workgroups(groups[0], groups[1], 1);
                        next = ops.next_if(|o| matches!(o, Op::Dispatch { .. }));
                    }
                }
            }
        }
        gpu.queue.submit([encoder.finish()]);

        let mapped: Vec<_> = staging
            .iter()
            .map(|b| {
                let (done, result) = oneshot();
                b.map_async(wgpu::MapMode::Read, .., done);
                result
            })
            .collect();
        let errors = scopes.pop("running the kernels");
        // Natively this drives the GPU to completion and fires the map callbacks; on the web the
        // browser does both and this returns at once.
        device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| gpu_err("waiting for the GPU", e))?;
        errors.await?;
        for m in mapped {
            m.await.map_err(|e| gpu_err("reading results back", e))?;
        }
        gpu.check()?;

        let mut out = Vec::with_capacity(self.taps.len());
        for (&(buf, off), &b) in place.iter().zip(&self.taps) {
            if b == 0 {
                out.push(Vec::new());
                continue;
            }
            let view = staging[buf].get_mapped_range(off..off + b).map_err(|e| gpu_err("reading results back", e))?;
            out.push(bytemuck::pod_collect_to_vec::<u8, f32>(&view));
        }
        for b in &staging {
            b.unmap();
        }
        Ok(out)
    }
}

/// A one-value channel whose receiver is a future: how a `map_async` callback wakes an `async fn`
/// both natively (already done after `poll`) and in the browser (woken from the event loop).
fn oneshot<T: Send + 'static>() -> (impl FnOnce(T) + Send + 'static, Receiver<T>) {
    let slot = Arc::new(Mutex::new((None, None::<Waker>)));
    let tx = slot.clone();
    let send = move |v: T| {
        let mut s = tx.lock().unwrap_or_else(|p| p.into_inner());
        s.0 = Some(v);
        if let Some(w) = s.1.take() {
            w.wake();
        }
    };
    (send, Receiver(slot))
}

struct Receiver<T>(Arc<Mutex<(Option<T>, Option<Waker>)>>);

impl<T> Future for Receiver<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match s.0.take() {
            Some(v) => Poll::Ready(v),
            None => {
                s.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    /// A bad dispatch (a kernel bound to a buffer that is not a storage buffer) is a validation
    /// error: `run` returns it as `Error::Gpu` with wgpu's message instead of panicking, and the
    /// device keeps working.
    #[test]
    fn validation_error_is_an_err_and_the_device_survives() {
        let gpu = match pollster::block_on(Gpu::open()) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("SKIP: {e}");
                return;
            }
        };
        let x = gpu.upload("x", &[1.0f32, 2.0]).unwrap();
        let not_storage = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("not storage"),
            size: 8,
            usage: wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut prog = Program::new(&gpu);
        prog.residual(&not_storage, &x, 2);
        prog.read(&x, 0, 2);
        match pollster::block_on(prog.run()) {
            Err(Error::Gpu(m)) => assert!(m.contains("STORAGE") || m.contains("usage"), "{m}"),
            other => panic!("expected a GPU validation error, got {other:?}"),
        }
        let y = gpu.upload("y", &[10.0f32, 20.0]).unwrap();
        let mut prog = Program::new(&gpu);
        prog.residual(&x, &y, 2);
        prog.read(&x, 0, 2);
        assert_eq!(pollster::block_on(prog.run()).unwrap(), vec![vec![11.0, 22.0]]);
    }
}
