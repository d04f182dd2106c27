#!/bin/sh
# Compile throughput of a compile-bound space with and without the second
# cache level (configurations with the same code share one cubin, compiler.h):
# compiles a slice of a T1 space exhaustively (`ktune compile --all`, in the
# space's order) twice from an empty cubin cache, first with
# KTUNE_CODE_REUSE=0 (every configuration through NVRTC's whole pipeline, as
# before), then with the reuse on, and prints configurations per second for
# both, their ratio, and whether both runs produced the same cubins.
# Needs no GPU (NVRTC only).
#
#   bench/gpu/compile_reuse.sh KTUNE OUT T1.json [-j N] [PARAM=v1,v2,...]...
#
# PARAM=... restricts a tunable parameter to those values (the slice); the T1
# file and its kernel file are copied into OUT with that change. E.g. for
# benchmark_hub's convolution_milo (docs/benchmarks.md):
#   bench/gpu/compile_reuse.sh build/ktune /tmp/cr convolution_milo.json -j 16 block_size_x=48,64 block_size_y=4
set -u
KTUNE=$1; OUT=$2; T1=$3; shift 3
JOBS=$(nproc)
if [ "${1:-}" = "-j" ]; then JOBS=$2; shift 2; fi
mkdir -p "$OUT"
rm -rf "$OUT/cache-off" "$OUT/cache-on"
python3 - "$T1" "$OUT" "$@" <<'PY' || exit 2
import json, os, shutil, sys
t1, out, *restrict = sys.argv[1:]
spec = json.load(open(t1))
params = {p["Name"]: p for p in spec["ConfigurationSpace"]["TuningParameters"]}
for r in restrict:
    name, values = r.split("=", 1)
    params[name]["Values"] = "[" + values + "]"
kernel = spec["KernelSpecification"]["KernelFile"]
shutil.copy(os.path.join(os.path.dirname(os.path.abspath(t1)), kernel), os.path.join(out, os.path.basename(kernel)))
spec["KernelSpecification"]["KernelFile"] = os.path.basename(kernel)
json.dump(spec, open(os.path.join(out, "slice.json"), "w"), indent=1)
PY
for mode in off on; do
  reuse=0; [ "$mode" = on ] && reuse=1
  start=$(date +%s.%N)
  KTUNE_CACHE_DIR="$OUT/cache-$mode" KTUNE_CODE_REUSE=$reuse \
    "$KTUNE" compile "$OUT/slice.json" --all -j "$JOBS" --json > "$OUT/$mode.json" 2> "$OUT/$mode.err"
  rc=$?
  end=$(date +%s.%N)
  echo "$mode $rc $start $end" > "$OUT/$mode.time"
done
python3 - "$OUT" "$JOBS" <<'PY'
import hashlib, json, os, sys
out, jobs = sys.argv[1:]
def run(mode):
    _, rc, start, end = open(os.path.join(out, mode + ".time")).read().split()
    rows = json.load(open(os.path.join(out, mode + ".json")))["configurations"]
    return int(rc), float(end) - float(start), rows
def cubins(mode):
    # Every entry of the cache folder, keyed by its first-level key: the
    # cubin bytes of each configuration (compile rows carry the key's entry).
    found = {}
    for root, _, files in os.walk(os.path.join(out, "cache-" + mode)):
        for f in files:
            if f.endswith(".kcubin"):
                data = open(os.path.join(root, f), "rb").read()
                at = data.find(b"\ncubin ")
                found[f[:-7]] = hashlib.sha256(data[at:data.rfind(b"sha256 ")]).hexdigest()
    return found
res = {m: run(m) for m in ("off", "on")}
for m, (rc, secs, rows) in res.items():
    same = sum(1 for r in rows if r.get("same_code"))
    print(f"reuse {m:3}  rc={rc}  configurations={len(rows)}  compiled_by_nvrtc={len(rows) - same}  "
          f"wall={secs:.1f}s  configs_per_s={len(rows) / secs:.3f}  (-j {jobs})")
off, on = cubins("off"), cubins("on")
common = set(off) & set(on)
print(f"speed-up {res['off'][1] / res['on'][1]:.2f}x;  cubins compared: {len(common)}, "
      f"different: {sum(1 for k in common if off[k] != on[k])}")
PY
