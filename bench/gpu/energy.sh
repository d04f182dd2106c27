#!/bin/sh
# One template tuned for energy and for time in the same run: every
# configuration's time and energy per launch (`tune --energy`, NVML's energy
# counter over about MS ms of back-to-back launches), then the optimum of each
# objective, its time, energy and average power, and what the other objective
# pays for it.
#
#   bench/gpu/energy.sh KTUNE OUT_DIR TEMPLATE MS [tune options...]
set -u
KTUNE=$1; OUT=$2; T=$3; MS=$4; shift 4
export KTUNE_CACHE_DIR=${KTUNE_CACHE_DIR:-/tmp/ktune-cache}
mkdir -p "$OUT"
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
start=$(date +%s)
"$KTUNE" tune "templates/$T/$T.yaml" --objective energy --energy "$MS" --db "$OUT/energy.db" --json "$@" \
  > "$OUT/$T-energy.json" 2> "$OUT/$T-energy.err"
echo "tune rc=$? wall_s=$(( $(date +%s) - start ))"
"$KTUNE" results --db "$OUT/energy.db" --json > "$OUT/$T-results.json"
python3 - "$OUT/$T-results.json" <<'PY'
import json, sys
ok = [r for r in json.load(open(sys.argv[1])) if r["status"] == "ok" and r.get("energy_j") is not None]
# One row per configuration: the final interleaved re-measure where there is one.
per = {}
for r in ok:
    k = json.dumps(r["config"], sort_keys=True)
    if k not in per or "re-measured" in (r.get("reason") or ""): per[k] = r
rows = list(per.values())
if not rows: print("no configuration with energy"); sys.exit(1)
by_time = min(rows, key=lambda r: r["time_ms"])
by_energy = min(rows, key=lambda r: r["energy_j"])
print(f"{len(rows)} configurations with time and energy")
print("| optimum of | config | time ms | energy mJ/launch | avg power W |")
print("| --- | --- | ---: | ---: | ---: |")
for name, r in (("time", by_time), ("energy", by_energy)):
    w = r["energy_j"] / (r["time_ms"] / 1000)
    print(f"| {name} | {json.dumps(r['config'])} | {r['time_ms']:.4f} | {r['energy_j']*1000:.4f} | {w:.0f} |")
print(f"energy optimum: {by_energy['time_ms']/by_time['time_ms']:.3f}x the time, "
      f"{by_energy['energy_j']/by_time['energy_j']:.3f}x the energy of the time optimum")
watts = [r["energy_j"] / r["time_ms"] * 1000 for r in rows]
print(f"average power over the configurations: {min(watts):.0f} to {max(watts):.0f} W")
print("the five lowest energies:")
for r in sorted(rows, key=lambda r: r["energy_j"])[:5]:
    print(f"  {r['energy_j']*1000:.2f} mJ  {r['time_ms']:.4f} ms  {r['energy_j']/r['time_ms']*1000:.0f} W  {json.dumps(r['config'])}")
PY
