#!/bin/sh
# Live runs at wall-clock budgets: each strategy, seed and limit tunes SPEC
# with --time-limit LIMIT and no evaluation budget, from an empty cubin cache
# and an empty database, --no-prior. Prints per run the evaluations (and of
# them those measured while the strategy proposed), the wall time of the
# process, the GPU's busy share (load, verify and measure time over the wall),
# the compiles, the best time and the fraction of OPTIMUM (the best time in
# ms, e.g. the exhaustive recording's) it is, and the seconds to 90% and 95%
# of it (the first stored result that reached it, from the process's start). Each run's database and JSON summary stay in OUT, to set beside
# the replay's prediction of the same run (docs/commands.md, "The replay's clock").
# "default" runs ktune's default strategy; NAME-nospares runs NAME with
# --no-spares (nothing measured while the strategy proposes).
#
#   bench/gpu/time_budget.sh KTUNE OUT SPEC OPTIMUM "LIMITS" "SEEDS" STRATEGY...
#   e.g. bench/gpu/time_budget.sh build-gpu/ktune out/gemm .ext/bat-gemm/GEMM-CAFF.json 3.5889 "10s 30s" "1 2" \
#          default random_sample brute_force default-nospares
set -u
BIN=$1; OUT=$2; SPEC=$3; OPT=$4; LIMITS=$5; SEEDS=$6; shift 6
mkdir -p "$OUT"
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
"$BIN" devices | head -3 || exit 1
for s in "$@"; do
  for limit in $LIMITS; do
    for seed in $SEEDS; do
      tag="$s-$limit-$seed"
      rm -rf "$OUT/cache-$tag" "$OUT/$tag.db"*
      case "$s" in
        default) set -- ;;
        default-nospares) set -- --no-spares ;;
        *-nospares) set -- --strategy "${s%-nospares}" --no-spares ;;
        *) set -- --strategy "$s" ;;
      esac
      start=$(date +%s.%N)
      KTUNE_CACHE_DIR="$OUT/cache-$tag" timeout 600 "$BIN" tune "$SPEC" "$@" --seed "$seed" --max-fevals 0 \
        --time-limit "$limit" --no-prior --db "$OUT/$tag.db" --json > "$OUT/$tag.json" 2> "$OUT/$tag.err"
      rc=$?
      end=$(date +%s.%N)
      echo "$tag $rc $start $end" >> "$OUT/runs.txt"
      "$BIN" results --json --sort id --db "$OUT/$tag.db" > "$OUT/$tag.rows.json" 2>/dev/null
      rm -rf "$OUT/cache-$tag"
    done
  done
done
python3 - "$OUT" "$OPT" <<'PY'
import datetime, json, sys
out, opt = sys.argv[1], float(sys.argv[2])

def when(row):
    t = row.get("timestamp")
    if not t:
        return None
    return datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()

print(f"{'run':28} {'rc':>2} {'evals':>6} {'beside':>6} {'wall s':>6} {'GPU busy':>8} {'compiled':>8} "
      f"{'best ms':>9} {'of opt':>6} {'to 90%':>6} {'to 95%':>6}")
for line in open(f"{out}/runs.txt"):
    tag, rc, start, end = line.split()
    start, end = float(start), float(end)
    try:
        j = json.load(open(f"{out}/{tag}.json"))
        rows = json.load(open(f"{out}/{tag}.rows.json"))
        ts = j["time_split"]
        wall = end - start
        best = j["best"][0]["time_ms"]
        frac = opt / best
        reach = {}
        running = None
        for r in rows:
            if r.get("status") != "ok" or str(r.get("reason", "")).startswith("re-measured"):
                continue
            v = r.get("time_ms")
            if v is None:
                continue
            running = v if running is None else min(running, v)
            t = when(r)
            for goal in (0.9, 0.95):
                if opt / running >= goal and goal not in reach and t is not None:
                    reach[goal] = t - start
        to = lambda g: f"{reach[g]:6.1f}" if g in reach else "     -"
        print(f"{tag:28} {rc:>2} {j['evaluations']:6} {j.get('measured_beside', 0):6} {wall:6.1f} "
              f"{100 * ts['gpu_s'] / wall:7.1f}% {ts['compiled']:8} {best:9.4f} {frac:6.3f} {to(0.9)} {to(0.95)}")
    except Exception as e:
        print(f"{tag:28} {rc:>2} no result ({e})")
PY
