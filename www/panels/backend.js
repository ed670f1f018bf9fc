// The backend controls in the top bar: Auto / CPU / WebGPU (a link field; the page navigates to
// change it), "Check GPU against CPU", and one short note for the GPU's messages — a fallback to the
// CPU, or the check's worst relative error — with the adapter and timings as its tooltip, so the
// top bar keeps one line.

import { t } from '../strings.js';
import { errorText } from '../page/error_text.js';

// No WebGPU in this browser, or no adapter: not a failure (the CPU path computes the same numbers),
// said short in the top bar and whole in its tooltip, in the page's ink rather than as an error.
const NO_GPU = new Set(['noWebGpu', 'noAdapter']);

// The GPU path's bound against the CPU path: max |gpu − cpu| / max |cpu| per tensor, where a kernel
// reorders sums (the trace contract's tolerance).
const GPU_BOUND = 1e-3;

// call: the worker's call; args(): the current run's arguments; choose(backend): the reader picked one.
export function backendControls({ call, args, choose }) {
  const select = document.getElementById('backend');
  const note = document.getElementById('gpu-note');
  select.addEventListener('change', (e) => choose(e.target.value));
  document.getElementById('gpu-check').addEventListener('click', check);

  function say(text, kind = '', detail = text) {
    note.textContent = text;
    note.title = detail;
    note.dataset.kind = kind;
  }

  async function check() {
    say(t('backend.checking'));
    try {
      const { worst, adapter, gpu_ms: gpuMs, cpu_ms: cpuMs } = await call('checkGpu', { args: args() });
      const error = worst.problem ?? worst.rel.toExponential(2);
      const numbers = { name: worst.name, error, adapter, gpu: gpuMs.toFixed(1), cpu: cpuMs.toFixed(1), bound: GPU_BOUND.toExponential(0) };
      // A verdict against the bound the GPU path is held to (docs/trace-contract.md), not a bare number.
      const agree = !worst.problem && worst.rel <= GPU_BOUND;
      // A problem (NaN, a differing -inf pattern, a tensor the GPU did not record) is no relative error.
      const said = worst.problem ? t('backend.checkedProblem', { name: worst.name, problem: worst.problem }) : t(agree ? 'backend.checked' : 'backend.checkedOff', numbers);
      say(said, agree ? 'check' : 'fallback', t('backend.checkedDetail', numbers));
      note.dataset.worst = worst.problem ? 'Infinity' : String(worst.rel);
    } catch (err) {
      if (NO_GPU.has(err.code)) say(t('backend.noGpu'), 'info', errorText(err));
      else say(t('backend.checkFailed', { error: errorText(err) }), 'fallback');
    }
  }

  return {
    /** Shows the backend in the link's state. */
    show(backend) {
      select.value = backend;
    },
    /** A run's answer: its fallback to the CPU, if the GPU failed, or nothing. */
    ran(result) {
      if (NO_GPU.has(result.gpu_error_code)) say(t('backend.noGpu'), 'info', errorText({ code: result.gpu_error_code, message: result.gpu_error }));
      else say(result.gpu_error ? t('backend.fallback', { error: result.gpu_error }) : '', result.gpu_error ? 'fallback' : '');
    },
  };
}
