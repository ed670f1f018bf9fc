//! The GPU itself: adapter, device and queue, the compiled kernels, and how failures become `Error::Gpu`.
//! wgpu's defaults panic on an uncaptured error or report a lost device to nobody; here both are caught
//! and surface as an `Err` from the next call, so a caller can fall back to the CPU.

use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

use super::kernels::Kernels;
use crate::Error;

pub struct Gpu {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) kernels: Kernels,
    pub(crate) limits: wgpu::Limits,
    /// What the adapter calls itself, e.g. "llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)" for lavapipe.
    pub adapter: String,
    /// Which matmul kernel runs: chosen from the adapter's type, settable (tests run both).
    pub matmul: Matmul,
    /// An error no scope caught, or the reason the device was lost; every later call fails with it.
    failure: Arc<Mutex<Option<String>>>,
}

/// The two matmul kernels: the same result, each fast on its kind of adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matmul {
    /// matmul.wgsl: 64 x 64 tiles staged in workgroup memory, for GPUs.
    Tiled,
    /// matmul_blocked.wgsl: 8 x 4 outputs per invocation from global memory, for CPU adapters.
    Blocked,
}

pub(crate) fn gpu_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Gpu(format!("{what}: {e}"))
}

impl Gpu {
    /// Finds an adapter, opens a device with the adapter's own limits, and compiles every kernel.
    /// No adapter is an `Err`, never a panic. Vulkan (Metal, DX12, WebGPU) is tried before GL, so a
    /// machine with Vulkan never probes EGL; WGPU_BACKEND=vulkan|gl|... picks one natively.
    pub async fn open() -> Result<Gpu, Error> {
        let tries = match wgpu::Backends::from_env() {
            Some(chosen) => vec![chosen],
            None => vec![wgpu::Backends::PRIMARY, wgpu::Backends::SECONDARY],
        };
        let mut failures = Vec::new();
        let mut found = None;
        for backends in tries {
            let desc = wgpu::InstanceDescriptor { backends, ..wgpu::InstanceDescriptor::new_without_display_handle_from_env() };
            let options = wgpu::RequestAdapterOptions { power_preference: wgpu::PowerPreference::HighPerformance, ..Default::default() };
            match wgpu::Instance::new(desc).request_adapter(&options).await {
                Ok(adapter) => {
                    found = Some(adapter);
                    break;
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        let adapter = found.ok_or_else(|| Error::Gpu(format!("no GPU adapter: {}", failures.join("; "))))?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("attnscope"),
                required_features: wgpu::Features::empty(),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| gpu_err("cannot open the GPU device", e))?;

        let failure = Arc::new(Mutex::new(None::<String>));
        let sink = failure.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
        }));
        let sink = failure.clone();
        device.set_device_lost_callback(move |reason, message| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| format!("device lost ({reason:?}): {message}"));
        });

        let scope = ErrorScopes::push(&device);
        let kernels = Kernels::compile(&device);
        scope.pop("compiling the kernels").await?;
        // A browser's WebGPU keeps the adapter's name to itself: then the backend alone names it.
        let adapter = if info.name.is_empty() { format!("{:?}", info.backend) } else { format!("{} ({:?})", info.name, info.backend) };
        let matmul = if info.device_type == wgpu::DeviceType::Cpu { Matmul::Blocked } else { Matmul::Tiled };
        let gpu = Gpu { device, queue, kernels, limits, adapter, matmul, failure };
        gpu.check()?;
        Ok(gpu)
    }

    /// The first failure the device reported outside an error scope, if any.
    pub(crate) fn check(&self) -> Result<(), Error> {
        match self.failure.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(m) => Err(Error::Gpu(m.clone())),
            None => Ok(()),
        }
    }

    /// The largest storage buffer one kernel may bind.
    pub(crate) fn max_binding(&self) -> u64 {
        self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size)
    }

    fn fits(&self, what: &str, bytes: u64) -> Result<(), Error> {
        if bytes > self.max_binding() {
            return Err(Error::Gpu(format!(
                "{what} needs a buffer of {:.1} MB; this GPU binds at most {:.1} MB",
                bytes as f64 / 1e6,
                self.max_binding() as f64 / 1e6
            )));
        }
        Ok(())
    }

    /// A storage buffer holding `data` (f32 or u32), e.g. a weight matrix or one call's ids.
    pub(crate) fn upload<T: bytemuck::Pod>(&self, what: &str, data: &[T]) -> Result<wgpu::Buffer, Error> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.fits(what, bytes.len() as u64)?;
        // An empty binding is invalid; a 4-byte buffer stands in for an empty tensor.
        let contents = if bytes.is_empty() { &[0u8; 4][..] } else { bytes };
        Ok(self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(what),
            contents,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        }))
    }

    /// A zeroed working buffer of at least `bytes`.
    pub(crate) fn scratch(&self, what: &str, bytes: u64) -> Result<wgpu::Buffer, Error> {
        self.fits(what, bytes)?;
        Ok(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(what),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }
}

/// Validation, out-of-memory and internal error scopes around one piece of work.
pub(crate) struct ErrorScopes([wgpu::ErrorScopeGuard; 3]);

impl ErrorScopes {
    pub(crate) fn push(device: &wgpu::Device) -> ErrorScopes {
        ErrorScopes([
            device.push_error_scope(wgpu::ErrorFilter::Validation),
            device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
            device.push_error_scope(wgpu::ErrorFilter::Internal),
        ])
    }

    /// Pops the scopes (innermost first) and turns the first error caught into `Error::Gpu`.
    pub(crate) fn pop(self, what: &str) -> impl std::future::Future<Output = Result<(), Error>> {
        let [validation, oom, internal] = self.0;
        let futures = [internal.pop(), oom.pop(), validation.pop()];
        let what = what.to_string();
        async move {
            let mut first = None;
            for f in futures {
                if let Some(e) = f.await {
                    first.get_or_insert(e);
                }
            }
            match first {
                Some(e) => Err(gpu_err(&what, e)),
                None => Ok(()),
            }
        }
    }
}
