#!/bin/bash
# Inputs filled on the device against the host on a GPU host: per element
# type, the time to fill 2 GiB with fill_host plus its upload (the path before
# the device fill) and with the device fill kernel, and the kernel's start-up
# from a warm cubin cache (build/bench/fill_bench, Google Benchmark). Then the
# end-to-end case of issue 22: one vector_add configuration over 2^28 floats
# (a and b: 2 GiB of random inputs), wall time of `ktune tune` from start to
# exit; pass a second build's folder (e.g. one of main before the device
# fill) to time the same run with it.
#
#   bench/gpu/fill.sh BUILD OUTDIR [BUILD_BEFORE]
set -eu
BUILD=$1; OUT=$2; BEFORE=${3:-}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
"$BUILD/bench/fill_bench" --benchmark_filter='log2_bytes:31|BM_FillerStart' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true --benchmark_format=json > "$OUT/fill_bench.json" 2> "$OUT/fill_bench.err"
python3 - "$OUT/fill_bench.json" <<'PY'
import json, sys
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median" or b.get("error_occurred"):
        continue
    name = b["run_name"]
    rows[name] = b["real_time"]  # ms
types = {"0": "half", "2": "float", "3": "double", "8": "uint8"}
print("| element type | host fill + upload, 2 GiB (ms) | device fill, 2 GiB (ms) | ratio |")
print("| --- | --- | --- | --- |")
for code, name in types.items():
    host = rows.get(f"BM_FillHostAndUpload/type:{code}/log2_bytes:31/manual_time")
    dev = rows.get(f"BM_FillDevice/type:{code}/log2_bytes:31/manual_time")
    if host is None or dev is None:
        print(f"| {name} | {host} | {dev} | - |")
        continue
    print(f"| {name} | {host:.1f} | {dev:.2f} | {host / dev:.0f}x |")
start = rows.get("BM_FillerStart/manual_time")
print(f"device fill kernel start-up (warm cubin cache): {start:.2f} ms" if start else "start-up: not measured")
PY
# One configuration of vector_add over 2^28 floats, end to end.
spec=templates/vector_add/vector_add.yaml
run() {  # label, ktune binary
  local db="$OUT/vadd-$1.db" start end
  rm -f "$db"*
  start=$(date +%s.%N)
  "$2" tune "$spec" --set n=268435456 --strategy random_sample --max-fevals 1 --seed 1 --db "$db" \
      > "$OUT/vadd-$1.out" 2> "$OUT/vadd-$1.err" || echo "$1: ktune tune failed, see $OUT/vadd-$1.err"
  end=$(date +%s.%N)
  python3 -c "import sys; print(f'vector_add n=2^28, one configuration, $1: {float(sys.argv[2]) - float(sys.argv[1]):.2f} s wall')" "$start" "$end"
}
run after "$BUILD/ktune"
[ -n "$BEFORE" ] && run before "$BEFORE/ktune"
exit 0
