#!/bin/bash
# ktune and Kernel Tuner per configuration on the GPU of this host, start-up
# included (each tool's whole process timed, empty compile caches):
#   1. vector_add over 2^28 floats (templates/vector_add, a ktune template, 246
#      configurations): ktune brute force against Kernel Tuner brute force on
#      the same kernel and space (bench/gpu/kt_spec_side_by_side.py);
#   2. BAT's GEMM T1 as published: Kernel Tuner's random_sample of KT_GEMM_N
#      configurations (default 400; its brute_force takes neither max_fevals
#      nor time_limit, and the whole space would take about an hour), its
#      seconds per configuration against ktune's exhaustive run of the same
#      file (bench/gpu/bat_gemm_exhaustive.sh, run separately: EXHAUSTIVE_JSON
#      gives its wall_s, evaluations and best_ms).
# Kernel Tuner comes from the wheels in .whl/ (installed into /tmp/site).
#
#   bench/gpu/kt_side_by_side.sh KTUNE BAT_GEMM_DIR OUTDIR
set -u
KTUNE=$1; BATDIR=$2; OUT=$3
KT_GEMM_N=${KT_GEMM_N:-400}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
now() { date +%s.%N; }
: > "$OUT/rows.txt"

# 1. vector_add, 2^28 floats.
rm -rf "$OUT/vadd.db"* "$OUT/cache-vadd"
s=$(now)
KTUNE_CACHE_DIR="$OUT/cache-vadd" "$KTUNE" tune templates/vector_add/vector_add.yaml --set n=268435456 \
  --strategy brute_force --max-fevals 0 --no-prior --json --db "$OUT/vadd.db" > "$OUT/vadd-ktune.json" 2> "$OUT/vadd-ktune.err"
e=$(now)
echo "vector_add ktune $s $e $OUT/vadd-ktune.json" >> "$OUT/rows.txt"
s=$(now)
CUPY_CACHE_DIR="$OUT/cache-vadd-kt" python3 bench/gpu/kt_spec_side_by_side.py templates/vector_add/vector_add.yaml \
  --set n=268435456 --strategy brute_force --out "$OUT/kt-vadd" > "$OUT/vadd-kt.json" 2> "$OUT/vadd-kt.err"
e=$(now)
echo "vector_add kt $s $e $OUT/vadd-kt.json" >> "$OUT/rows.txt"

# 2. BAT GEMM, Kernel Tuner on a random sample.
s=$(now)
CUPY_CACHE_DIR="$OUT/cache-gemm-kt" python3 bench/gpu/kt_t1_side_by_side.py "$BATDIR/GEMM-CAFF.json" --out "$OUT/kt-gemm" \
  --strategy random_sample --max-fevals "$KT_GEMM_N" --iterations 10 \
  > "$OUT/gemm-kt.json" 2> "$OUT/gemm-kt.err"
e=$(now)
echo "gemm_exhaustive kt $s $e $OUT/gemm-kt.json" >> "$OUT/rows.txt"

python3 - "$OUT" "${EXHAUSTIVE_JSON:-}" <<'PY'
import json, sys
out, exh = sys.argv[1], sys.argv[2]
def last(path):  # ktune's JSON document, or the runner's last line
    text = open(path).read().strip()
    try:
        return json.loads(text)
    except Exception:
        pass
    try:
        return json.loads(text.splitlines()[-1])
    except Exception as e:
        return {"_error": str(e)}
rows = {}
for line in open(out + "/rows.txt"):
    work, tool, s, e, path = line.split()
    j = last(path)
    n = j.get("evaluations") if tool == "ktune" else j.get("evaluated")
    best = (j.get("best") or [{}])[0].get("time_ms") if tool == "ktune" else j.get("best_time_ms")
    rows[(work, tool)] = (float(e) - float(s), n, best, j.get("_error") or j.get("aborted"))
if exh:
    j = json.loads(exh)
    rows[("gemm_exhaustive", "ktune")] = (j["wall_s"], j["evaluations"], j["best_ms"], None)
print("| workload | tool | configurations | wall s (start-up included) | s per configuration | best ms | ktune faster per configuration |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for work in ("vector_add", "gemm_exhaustive"):
    per = {}
    for tool in ("ktune", "kt"):
        if (work, tool) not in rows:
            continue
        wall, n, best, err = rows[(work, tool)]
        per[tool] = wall / n if n else None
        ratio = f"{per['kt'] / per['ktune']:.1f}x" if tool == "kt" and per.get("ktune") and per.get("kt") else ""
        print(f"| {work} | {'ktune' if tool == 'ktune' else 'Kernel Tuner'} | {n} | {wall:.1f} | "
              f"{per[tool] if per[tool] is None else round(per[tool], 4)} | {best} | {ratio} |" + (f" {err}" if err else ""))
PY
