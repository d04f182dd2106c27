#!/bin/bash
# Records the fresh held-out spaces (docs/strategies.md, "The fresh held-out
# set") on the GPU of this host: exhaustive runs of kernels nobody on the team
# wrote, kept as Kernel Tuner cache files (gzipped). The kernels and T1 files
# are fetched, never committed:
#   .ext/bat/{nbody,TRIAD}/    (NTNU-HPC-Lab/BAT batbench/benchmarks, T1 files as published)
#   .ext/kt-examples/*.cu      (KernelTuner/kernel_tuner examples/cuda; specs in bench/gpu/specs/)
#
#   bench/gpu/record_heldout.sh KTUNE OUTDIR [SUFFIX] [NAME...]
#
# SUFFIX names the GPU in the file names (default h100). Each space gets at
# most LIMIT seconds (default 150); a space cut off is resumed by running the
# same command again (bench/gpu/record.sh keeps its database). Racing is on,
# as in a user's run: a configuration whose first sample is far behind the
# best keeps that one sample.
set -u
KTUNE=$1; OUT=$2; SUFFIX=${3:-h100}; shift 2; [ $# -gt 0 ] && shift
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
declare -A SPEC=(
  [bat_nbody]="$ROOT/.ext/bat/nbody/nbody-CAFF.json"
  [bat_triad]="$ROOT/.ext/bat/TRIAD/TRIAD-CAFF.json"
  [kt_reduction]="$HERE/specs/kt_reduction.yaml"
  [kt_pnpoly]="$HERE/specs/kt_pnpoly.yaml"
  [kt_expdist]="$HERE/specs/kt_expdist.yaml"
)
NAMES=("$@"); [ ${#NAMES[@]} -gt 0 ] || NAMES=(kt_reduction bat_nbody bat_triad kt_pnpoly kt_expdist)
mkdir -p "$OUT"
export KTUNE_CACHE_DIR=${KTUNE_CACHE_DIR:-$OUT/cache}
for name in "${NAMES[@]}"; do
  json="$OUT/${name}_${SUFFIX}.json"
  echo "== $name"
  KTUNE_RECORD_TIMEOUT=${LIMIT:-150} "$HERE/record.sh" "$KTUNE" "${SPEC[$name]}" "$json" > "$OUT/$name.log" 2>&1
  echo "rc=$? $(grep -h 'wall_s' "$OUT/$name.log")"
  gzip -kf "$json" 2>/dev/null
  tail -7 "$OUT/$name.log"
done
