#!/usr/bin/env bash
# One MiniMind-3 layer, and its matmuls alone, in Rust (cargo bench --bench layer -- matmul layer)
# against PyTorch on one thread (tools/bench/torch_layer.py), on the same machine in alternating
# rounds, so that load from elsewhere hits both alike. Prints each figure's median over the rounds and
# the ratios: layer time Rust / PyTorch (below 1: Rust is faster; the target is at most 2), and
# matmul GFLOP/s of each Rust kernel against PyTorch's F.linear.
#
#   tools/bench/run.sh            # ROUNDS=3 by default; each round runs both benches in full
#   ROUNDS=5 tools/bench/run.sh
#
# Needs python3 with torch (see tools/reference/README.md). Build first, so no compile overlaps a timing.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-3}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

cargo bench --bench layer --no-run
for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  cargo bench --quiet --bench layer -- matmul layer | tee -a "$log" >&2
  python3 tools/bench/torch_layer.py | tee -a "$log" >&2
done

python3 - "$log" <<'EOF'
import re
import statistics
import sys

times = {}
for line in open(sys.argv[1]):
    fields = dict(re.findall(r"(\S+)=(\S+)", line))
    if line.startswith(("layer ", "torch-layer ")):
        side = "rust" if line.startswith("layer ") else "torch"
        times.setdefault((side, int(fields["T"]), fields["attention"]), []).append(float(fields["median_ms"]))
        if side == "rust" and fields["auto"] == "true":
            times.setdefault((side, int(fields["T"]), "auto"), []).append(float(fields["median_ms"]))
    if line.startswith(("matmul ", "torch-matmul ")) and "gflops" in fields:
        who = fields.get("kernel", "torch")
        times.setdefault((who, int(fields["T"]), fields["in"], fields["out"]), []).append(float(fields["gflops"]))

med = {key: statistics.median(v) for key, v in times.items()}
print("matmul GFLOP/s   T     in    out   matrixmultiply  gemm    torch   gemm/torch")
for (who, t, k, out) in sorted((key for key in med if key[0] == "gemm"), key=lambda key: (key[1], key[2], key[3])):
    mm, gm, pt = med[("matrixmultiply", t, k, out)], med[("gemm", t, k, out)], med[("torch", t, k, out)]
    print(f"                 {t:<5} {k:<5} {out:<5} {mm:<15.1f} {gm:<7.1f} {pt:<7.1f} {gm / pt:.2f}")
print()
# ours auto = what Model::forward runs; sdpa = what MiniMind runs by default (flash_attn = True).
pairs = [("auto", "sdpa"), ("flash", "sdpa"), ("naive", "manual")]
print("layer  T     rust path  ms        torch path  ms        rust/torch")
for t in sorted({key[1] for key in med if key[0] == "rust"}):
    for ours, theirs in pairs:
        r, p = med[("rust", t, ours)], med[("torch", t, theirs)]
        print(f"       {t:<5} {ours:<10} {r:<9.2f} {theirs:<11} {p:<9.2f} {r / p:.2f}")
EOF
