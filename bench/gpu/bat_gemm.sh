#!/bin/bash
# ktune and Kernel Tuner side by side on the GPU of this host, on BAT's GEMM T1
# file as published (GEMM-CAFF.json + gemm.cu, kept out of the repository):
#   (a) ktune random_sample, 60 configurations, seed 1, fresh database
#   (b) ktune model_rank (its default), 60 configurations, seed 1, fresh database
#   (c) Kernel Tuner random_sample, 60 configurations, seed 1
#       (bench/gpu/kt_t1_side_by_side.py; wheels from .whl/, installed into /tmp/site)
# Each run starts with an empty compile cache (ktune: KTUNE_CACHE_DIR, CuPy:
# CUPY_CACHE_DIR), so its wall time includes every compile. Prints a markdown
# table: evaluated, failed (by status), wall time, per configuration, best time
# and TFLOP/s (2*4096^3 flops), and the first failure reason of each status.
#
#   bench/gpu/bat_gemm.sh build/tuner/ktune .ext/bat-gemm OUTDIR
#
# Run from the repository root. Everything is written under OUTDIR.
# FEVALS (60), SEED (1), FLOPS (2*4096**3) and RUN_TIMEOUT (s per ktune run, 130; Kernel Tuner gets 60 more)
# can be set in the environment.
set -eu

if [ $# -ne 3 ]; then
  echo "usage: $0 KTUNE BAT_GEMM_DIR OUTDIR" >&2
  exit 2
fi
KTUNE=$1; BATDIR=$2; OUT=$3
FEVALS=${FEVALS:-60}; SEED=${SEED:-1}; FLOPS=${FLOPS:-2*4096**3}; RUN_TIMEOUT=${RUN_TIMEOUT:-130}

T1=$BATDIR/GEMM-CAFF.json
[ -f "$T1" ] || { echo "$0: $T1 not found" >&2; exit 2; }
[ -f "$BATDIR/gemm.cu" ] || { echo "$0: $BATDIR/gemm.cu not found" >&2; exit 2; }
[ -x "$KTUNE" ] || { echo "$0: $KTUNE is not an executable" >&2; exit 2; }
ls .whl/kernel_tuner-*.whl > /dev/null 2>&1 || { echo "$0: no .whl/kernel_tuner-*.whl (run from the repository root)" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# Kernel Tuner and the dependencies the host lacks, from the carried wheels.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import kernel_tuner, cupy, numpy; print('kernel_tuner', kernel_tuner.__version__, '| cupy', cupy.__version__, '| numpy', numpy.__version__)" | tee "$OUT/versions.txt"
echo "ktune $("$KTUNE" --version 2>/dev/null || echo '?')" | tee -a "$OUT/versions.txt"

date -u +"date: %Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
"$KTUNE" devices || true

: > "$OUT/runs.txt"

# ktune: one run per strategy, from an empty database and cubin cache.
run_ktune() {
  local strategy=$1 tag=ktune-$1 rc=0 start end
  rm -rf "$OUT/$tag.db" "$OUT/$tag.db-"* "$OUT/cache-$tag"
  echo "== ktune $strategy: $FEVALS configurations"
  start=$(date +%s.%N)
  KTUNE_CACHE_DIR="$OUT/cache-$tag" timeout -s INT -k 15 "$RUN_TIMEOUT" \
    "$KTUNE" tune "$T1" --strategy "$strategy" --max-fevals "$FEVALS" --seed "$SEED" --json --db "$OUT/$tag.db" \
    > "$OUT/$tag.json" 2> "$OUT/$tag.err" || rc=$?
  end=$(date +%s.%N)
  echo "ktune $strategy $rc $start $end" >> "$OUT/runs.txt"
  echo "   exit $rc, $(python3 -c "print(f'{$end - $start:.1f}')") s (stderr: $OUT/$tag.err)"
  # Every stored row (--limit 0, the default, is no limit), and the best.
  "$KTUNE" results "$T1" --json --sort id --limit 0 --db "$OUT/$tag.db" > "$OUT/$tag.results.json" 2>> "$OUT/$tag.err" || true
  "$KTUNE" best "$T1" --json --db "$OUT/$tag.db" > "$OUT/$tag.best.json" 2>> "$OUT/$tag.err" || true
  rm -rf "$OUT/cache-$tag"
}

run_ktune random_sample
run_ktune model_rank

# Kernel Tuner: random_sample, from an empty CuPy kernel cache.
tag=kt-random_sample
rm -rf "$OUT/kt" "$OUT/cache-$tag"
echo "== Kernel Tuner random_sample: $FEVALS configurations"
rc=0
start=$(date +%s.%N)
CUPY_CACHE_DIR="$OUT/cache-$tag" timeout -s INT -k 15 "$((RUN_TIMEOUT + 60))" \
  python3 bench/gpu/kt_t1_side_by_side.py "$T1" --out "$OUT/kt" --strategy random_sample \
  --max-fevals "$FEVALS" --seed "$SEED" --iterations 10 --flops "$FLOPS" \
  > "$OUT/$tag.json" 2> "$OUT/$tag.err" || rc=$?
end=$(date +%s.%N)
echo "kt random_sample $rc $start $end" >> "$OUT/runs.txt"
echo "   exit $rc, $(python3 -c "print(f'{$end - $start:.1f}')") s (log: $OUT/kt/kt_random_sample.log)"
rm -rf "$OUT/cache-$tag"

python3 - "$OUT" "$FLOPS" <<'PY' | tee "$OUT/summary.md"
import json, os, sys
out, flops = sys.argv[1], float(eval(sys.argv[2], {"__builtins__": {}}))

def load(path, last_line=False):
    """A JSON file; last_line: the last line of the file (the Kernel Tuner runner's stdout)."""
    try:
        with open(path) as f:
            text = f.read().strip()
        return json.loads(text.splitlines()[-1] if last_line else text)
    except Exception as e:
        return {"_error": f"{os.path.basename(path)}: {type(e).__name__}: {e}"}

rows, reasons, notes = [], [], []
for line in open(os.path.join(out, "runs.txt")):
    tool, strategy, rc, start, end = line.split()
    wall = float(end) - float(start)
    if tool == "ktune":
        tag = f"ktune-{strategy}"
        tune = load(os.path.join(out, tag + ".json"))
        res = load(os.path.join(out, tag + ".results.json"))
        best = load(os.path.join(out, tag + ".best.json"))
        res = res if isinstance(res, list) else []
        counts, first = {}, {}
        for r in res:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
            if r["status"] != "ok":
                first.setdefault(r["status"], {})
                first[r["status"]].setdefault(r.get("reason", "(no reason)"), 0)
                first[r["status"]][r.get("reason", "(no reason)")] += 1
        n = len(res) if res else tune.get("evaluations", 0)
        if isinstance(tune, dict) and "status_counts" in tune and tune["status_counts"] != counts:
            notes.append(f"ktune {strategy}: tune --json status_counts {tune['status_counts']} != results rows {counts}")
        b = best[0] if isinstance(best, list) and best else None
        best_ms = b["time_ms"] if b else None
        own = tune.get("elapsed_s") if isinstance(tune, dict) else None
        if b:
            notes.append(f"ktune {strategy}: best time_ms {b['time_ms']:.4f} (median of {b.get('sample_count', '?')} samples), "
                         f"mean {b.get('mean_ms', float('nan')):.4f}, min {b.get('min_ms', float('nan')):.4f}; "
                         f"config {b['config']}")
        if isinstance(tune, dict) and "_error" in tune:
            notes.append(f"ktune {strategy}: {tune['_error']}")
        for status, rs in first.items():
            distinct = list(rs.items())
            reason, k = distinct[0]
            reasons.append(f"ktune {strategy} {status} ({counts[status]}, {len(distinct)} distinct reasons): first: {reason[:400]}")
    else:
        tag = f"kt-{strategy}"
        kt = load(os.path.join(out, tag + ".json"), last_line=True)
        counts = kt.get("status_counts", {})
        n = kt.get("evaluated", 0)
        best_ms = kt.get("best_time_ms")
        own = kt.get("wall_s")
        if best_ms is not None:
            notes.append(f"Kernel Tuner {kt.get('kernel_tuner_version')} {strategy}: best time {best_ms:.4f} ms "
                         f"(mean of {kt.get('iterations')} runs), config {kt.get('best_config')}; "
                         f"compile {kt.get('compile_s')} s, benchmark {kt.get('benchmark_s')} s of {own} s")
        if kt.get("aborted"):
            notes.append(f"Kernel Tuner {strategy}: ABORTED: {kt['aborted']}")
        if "_error" in kt:
            notes.append(f"Kernel Tuner {strategy}: {kt['_error']}")
        for reason, k in (kt.get("failure_reasons") or {}).items():
            reasons.append(f"Kernel Tuner {strategy} ({k}x): {reason[:400]}")
        if any(k != "ok" for k in counts) and not kt.get("failure_reasons"):
            reasons.append(f"Kernel Tuner {strategy}: {counts} (Kernel Tuner printed no reason)")
        tool = "Kernel Tuner"
    failed = {k: v for k, v in counts.items() if k != "ok"}
    rows.append([tool, strategy, str(n),
                 f"{sum(failed.values())}" + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(failed.items())) + ")" if failed else ""),
                 f"{wall:.1f}", f"{wall / n:.3f}" if n else "-",
                 f"{own:.1f}" if isinstance(own, (int, float)) else "-",
                 f"{best_ms:.4f}" if best_ms else "-",
                 f"{flops / (best_ms * 1e-3) / 1e12:.2f}" if best_ms else "-",
                 rc])

gpu = open(os.path.join(out, "gpu.txt")).read().strip()
print(f"\n## BAT GEMM (GEMM-CAFF.json, 4096^3 sgemm) on {gpu}\n")
print("| tool | strategy | evaluated | failed (by status) | wall s | s/config | tool's own s | best ms | best TFLOP/s | exit |")
print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    print("| " + " | ".join(r) + " |")
print("\nwall s: the process's wall clock (date +%s.%N), start-up, data set-up and compiles included; "
      "s/config = wall s / evaluated; tool's own s: ktune's elapsed_s, Kernel Tuner's tune_kernel call. "
      f"TFLOP/s = {flops:.6g} / best time. ktune's time is the median of its samples, Kernel Tuner's the mean of 10 runs.")
print("\nFailures (first reason of each status):")
for r in reasons or ["none"]:
    print(f"- {r}")
print("\nNotes:")
for n in notes:
    print(f"- {n}")
PY
