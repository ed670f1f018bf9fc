#!/usr/bin/env bash
# One MiniMind-3 layer, and its matmuls alone, in Rust (cargo bench --bench layer -- matmul layer)
# against PyTorch on one thread (tools/bench/torch_layer.py), on the same machine in alternating
# rounds. Prints each figure's median over the rounds, and ratios taken within each round (the two
# sides run a minute apart at most, so load from elsewhere hits both alike), then their median and
# range over the rounds: layer time Rust / PyTorch (below 1: Rust is faster), also for the layer with
# its weights held transposed for gemm (auto-transposed: how linear.rs holds them on a CPU with
# neither AVX-512F nor AVX2, and held them everywhere before its x86-64 kernels), and the matmul
# GFLOP/s of what linear.rs runs ("packed": its AVX-512 kernel where the CPU has AVX-512F, its AVX2
# kernel where it has AVX2 and FMA) against PyTorch's
# F.linear, gemm on W^T held row-major ("transposed"), gemm on the checkpoint's layout and
# matrixmultiply.
#
#   tools/bench/run.sh            # ROUNDS=3 by default; each round runs both benches in full
#   ROUNDS=5 tools/bench/run.sh
#   KERNEL=avx2 tools/bench/run.sh  # on a CPU with AVX-512F: Rust's AVX2 kernel against PyTorch
#                                   # held to AVX2 (MKL_ENABLE_INSTRUCTIONS, ATEN_CPU_CAPABILITY),
#                                   # as on a CPU without AVX-512 (Zen 3): a stand-in, not Zen 3
#
# Needs python3 with torch (see tools/reference/README.md). Builds first, so no compile overlaps a timing.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-3}
if [ "${KERNEL:-}" = avx2 ]; then
  export ATTNSCOPE_X86_KERNEL=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ATEN_CPU_CAPABILITY=avx2
elif [ -n "${KERNEL:-}" ]; then
  echo "KERNEL=$KERNEL: only avx2 is known (unset: each side runs what the CPU has)" >&2
  exit 2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT

cargo bench --bench layer --no-run
for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  cargo bench --quiet --bench layer -- matmul layer | tee -a "$log" >&2
  python3 tools/bench/torch_layer.py | tee -a "$log" >&2
done

python3 - "$log" <<'PY'
import re
import statistics
import sys

# values[key][round]: layer milliseconds or matmul GFLOP/s; each Rust "machine" line opens a round.
values, round_no = {}, -1
for line in open(sys.argv[1]):
    fields = dict(re.findall(r"(\S+)=(\S+)", line))
    if line.startswith("machine "):
        round_no += 1
    elif line.startswith(("layer ", "torch-layer ")):
        side = "rust" if line.startswith("layer ") else "torch"
        if fields.get("weights") == "transposed":
            paths = ["auto-transposed"]
        else:
            paths = [fields["attention"]] + (["auto"] if fields.get("auto") == "true" else [])
        for path in paths:
            values.setdefault((side, int(fields["T"]), path), {})[round_no] = float(fields["median_ms"])
    elif line.startswith(("matmul ", "torch-matmul ")) and "gflops" in fields:
        who = fields.get("kernel", "torch")
        values.setdefault((who, int(fields["T"]), int(fields["in"]), int(fields["out"])), {})[round_no] = float(fields["gflops"])


def med(key):
    return statistics.median(values[key].values())


def ratio(a, b):
    """a / b within each round; the median over the rounds and (the range)."""
    r = sorted(values[a][i] / values[b][i] for i in values[a] if i in values[b])
    return f"{statistics.median(r):.2f} ({r[0]:.2f}-{r[-1]:.2f})"


print(f"{round_no + 1} rounds: medians over the rounds; ratios within each round, then their median (range)")
# packed = what linear.rs runs (its AVX-512 kernel where the CPU has AVX-512F, its AVX2 kernel where
# it has AVX2 and FMA, else the same as transposed); transposed = gemm on W^T held row-major; gemm = the same crate on the checkpoint's
# [out, in] layout.
print("matmul GFLOP/s  T     in    out   matrixmultiply  gemm    transposed  packed  torch   packed/torch      packed/transposed transposed/torch")
for _, t, k, out in sorted(key for key in values if key[0] == "gemm"):
    g, m, p = ("gemm", t, k, out), ("matrixmultiply", t, k, out), ("torch", t, k, out)
    tr, pk = ("transposed", t, k, out), ("packed", t, k, out)
    print(f"                {t:<5} {k:<5} {out:<5} {med(m):<15.1f} {med(g):<7.1f} {med(tr):<11.1f} {med(pk):<7.1f} {med(p):<7.1f} {ratio(pk, p):<17} {ratio(pk, tr):<17} {ratio(tr, p)}")
print()
# auto = the path Model::forward takes; sdpa = what MiniMind runs by default (flash_attn = True).
print("layer  T     rust path       ms        torch path  ms        rust/torch")
for t in sorted({key[1] for key in values if key[0] == "rust"}):
    for ours, theirs in [("auto", "sdpa"), ("flash", "sdpa"), ("naive", "manual"), ("auto-transposed", "sdpa")]:
        r, p = ("rust", t, ours), ("torch", t, theirs)
        print(f"       {t:<5} {ours:<15} {med(r):<9.2f} {theirs:<11} {med(p):<9.2f} {ratio(r, p)}")
PY
