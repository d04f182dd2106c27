#!/bin/bash
# BAT's GEMM T1 file as published (GEMM-CAFF.json + gemm.cu, 4096^3, 10,312
# valid configurations; kept out of the repository), tuned exhaustively on the
# GPU of this host with ktune's defaults (racing on) from an empty database and
# an empty compile cache. Prints the wall time, configurations per second,
# how many stopped early, where the time went and the best configuration.
#
#   bench/gpu/bat_gemm_exhaustive.sh KTUNE BAT_GEMM_DIR OUTDIR [ktune tune options]
#
# LIMIT (s, default 570) ends the run early (SIGINT: what was measured is kept).
# CHECK_TOP=N then measures the N configurations with the best stored times
# again with every sample (--no-racing --force, tune --configs-from): the
# winner of that full-sample run against the raced run's, and whether any
# configuration racing stopped early ranks in the full-sample top 1%.
set -u
KTUNE=$1; BATDIR=$2; OUT=$3; shift 3
LIMIT=${LIMIT:-570}
mkdir -p "$OUT"
rm -rf "$OUT/gemm.db"* "$OUT/cache"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
start=$(date +%s.%N)
KTUNE_CACHE_DIR="$OUT/cache" timeout -s INT -k 20 "$LIMIT" \
  "$KTUNE" tune "$BATDIR/GEMM-CAFF.json" --strategy brute_force --max-fevals 0 --no-prior --json \
  --db "$OUT/gemm.db" "$@" > "$OUT/run.json" 2> "$OUT/run.err"
rc=$?
end=$(date +%s.%N)
"$KTUNE" results "$BATDIR/GEMM-CAFF.json" --db "$OUT/gemm.db" --json --sort id --limit 0 > "$OUT/rows.json" 2>/dev/null
python3 - "$OUT" "$rc" "$start" "$end" <<'PY'
import json, sys, statistics
out, rc, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
wall = end - start
rows = json.load(open(out + "/rows.json"))
first = {}
for r in rows:
    k = json.dumps(r["config"], sort_keys=True)
    if k not in first and not r.get("reason", "").startswith("re-measured"):
        first[k] = r
rows = list(first.values())
ok = [r for r in rows if r["status"] == "ok"]
stopped = [r for r in ok if r.get("stopped_early")]
def s(key):
    return sum(r.get(key) or 0 for r in rows) / 1000
print(f"exit {rc}; {len(rows)} configurations in {wall:.1f} s wall = {len(rows)/wall:.2f}/s; ok {len(ok)}, stopped early {len(stopped)}")
print(f"summed: compile {s('compile_ms'):.1f} s (parallel), load {s('load_ms'):.1f} s, verify {s('verify_ms'):.1f} s, "
      f"benchmark {s('benchmark_ms'):.1f} s, framework {s('framework_ms'):.1f} s")
samples = [len(r.get("samples") or []) for r in ok]
if samples:
    print(f"samples per ok configuration: median {statistics.median(samples)}, mean {statistics.mean(samples):.2f}; "
          f"mean kernel time {statistics.mean(r['time_ms'] for r in ok):.3f} ms")
best = sorted((r for r in ok if not r.get("stopped_early")), key=lambda r: r["time_ms"])[:5]
for r in best:
    print(f"  {r['time_ms']:.4f} ms  samples {len(r.get('samples') or [])}  {r['config']}")
try:
    j = json.load(open(out + "/run.json"))
    print("run summary:", json.dumps({k: j.get(k) for k in ("stop", "evaluations", "elapsed_s", "time_split")}))
    for b in j.get("best", [])[:3]:
        print("  best:", b.get("time_ms"), b.get("confirmed_time_ms"), b.get("noise"), b.get("samples"), b["config"])
except Exception as e:
    print("no run summary:", e)
PY

[ -n "${CHECK_TOP:-}" ] || exit 0
device=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['device'])" "$OUT/run.json")
start=$(date +%s.%N)
KTUNE_CACHE_DIR="$OUT/cache" "$KTUNE" tune "$BATDIR/GEMM-CAFF.json" --configs-from "$device" --top "$CHECK_TOP" \
  --no-racing --force --json --db "$OUT/gemm.db" "$@" > "$OUT/check.json" 2> "$OUT/check.err"
rc=$?
end=$(date +%s.%N)
"$KTUNE" results "$BATDIR/GEMM-CAFF.json" --db "$OUT/gemm.db" --json --sort id --limit 0 > "$OUT/rows_all.json" 2>/dev/null
python3 - "$OUT" "$rc" "$start" "$end" "$CHECK_TOP" <<'PY'
import json, sys
out, rc, start, end, top = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
rows = json.load(open(out + "/rows_all.json"))
raced = json.load(open(out + "/rows.json"))
ids = {r["id"] for r in raced}
key = lambda r: json.dumps(r["config"], sort_keys=True)
first = {}
for r in raced:
    if not r.get("reason", "").startswith("re-measured"):
        first.setdefault(key(r), r)
full = [r for r in rows if r["id"] not in ids and r["status"] == "ok" and not r.get("stopped_early")]
full.sort(key=lambda r: r["time_ms"])
print(f"full-sample check: exit {rc}, {len(full)} configurations in {end - start:.1f} s")
rw = min((r for r in first.values() if r["status"] == "ok" and not r.get("stopped_early")), key=lambda r: r["time_ms"])
fw = full[0]
print(f"raced winner {rw['time_ms']:.4f} ms {rw['config']}")
print(f"full-sample winner {fw['time_ms']:.4f} ms {fw['config']}; same configuration: {key(rw) == key(fw)}")
same = [r for r in full if key(r) == key(rw)]
if same:
    print(f"the raced winner sampled fully: {same[0]['time_ms']:.4f} ms = {same[0]['time_ms'] / fw['time_ms']:.4f} x the full-sample winner")
n1 = max(1, len(full) // 100)
stopped = [r for r in full[:n1] if first.get(key(r), {}).get("stopped_early")]
print(f"full-sample top {n1} (1% of {len(full)}): {len(stopped)} were stopped early by racing")
for r in stopped:
    print(f"  stopped: raced {first[key(r)]['time_ms']:.4f} ms, full {r['time_ms']:.4f} ms {r['config']}")
PY
