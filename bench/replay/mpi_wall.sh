#!/bin/sh
# Wall time of a replayed brute-force run, one process against `mpirun -n N`
# (docs/benchmarks.md, "Tuning under MPI"). A replay evaluates in
# microseconds, so this measures what MPI costs the run (messages, polling,
# ranks sharing the cores), not GPU throughput.
#   bench/replay/mpi_wall.sh [BIN] [SPEC] [DATA] [REPS]
set -eu
BIN=${1:-build/ktune}
SPEC=${2:-bench/gpu/specs/gemm_bf16_10k.yaml}
DATA=${3:-examples/data/gemm_bf16_10k_h100.json}
REPS=${4:-3}
ROOT=""; [ "$(id -u)" -eq 0 ] && ROOT="--allow-run-as-root"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
echo "cores: $(nproc); $(mpirun --version | head -1)"
run() {  # label, command prefix
  for i in $(seq "$REPS"); do
    rm -f "$TMP"/t.db*
    s=$(date +%s.%N)
    $2 "$BIN" tune "$SPEC" --simulate "$DATA" --strategy brute_force --max-fevals 0 --json --db "$TMP/t.db" \
      > "$TMP/out.json" 2>/dev/null
    e=$(date +%s.%N)
    n=$(grep -m1 '"evaluations"' "$TMP/out.json" | tr -dc 0-9)
    w=$(grep -m1 '"workers"' "$TMP/out.json" | tr -dc 0-9)
    echo "$1 run $i: $(awk "BEGIN{print $e - $s}") s wall, $n evaluations, workers $w"
  done
}
run "one process" ""
for n in 2 3 4; do run "mpirun -n $n" "mpirun --oversubscribe $ROOT -n $n"; done
