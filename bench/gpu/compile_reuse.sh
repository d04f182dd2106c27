#!/bin/sh
# Compile throughput of a compile-bound space with and without the second
# cache level (configurations with the same code share one cubin, compiler.h):
# compiles a slice of a T1 space exhaustively (`ktune compile --all`, in the
# space's order) twice from an empty cubin cache, first with
# KTUNE_CODE_REUSE=0 (every configuration through NVRTC's whole pipeline, as
# before), then with the reuse on, and prints for both the configurations per
# second of wall time and per CPU second (the compile workers' user + system
# time: the steadier figure on a shared machine), the speed-up, and whether
# both runs produced the same cubins. Needs no GPU (NVRTC only).
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
"$(dirname "$0")/t1_slice.py" "$T1" "$OUT" "$@" || exit 2
python3 - "$KTUNE" "$OUT" "$JOBS" <<'PY'
import hashlib, json, os, resource, subprocess, sys, time
ktune, out, jobs = sys.argv[1:]

def cubins(mode):
    # The cubin field of every first-level entry in the cache folder.
    found = {}
    for root, _, files in os.walk(os.path.join(out, "cache-" + mode)):
        for f in files:
            if f.endswith(".kcubin"):
                data = open(os.path.join(root, f), "rb").read()
                found[f[:-7]] = hashlib.sha256(data[data.find(b"\ncubin "):data.rfind(b"sha256 ")]).hexdigest()
    return found

res = {}
for mode in ("off", "on"):
    env = dict(os.environ, KTUNE_CACHE_DIR=os.path.join(out, "cache-" + mode), KTUNE_CODE_REUSE="1" if mode == "on" else "0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(os.path.join(out, mode + ".json"), "w") as o, open(os.path.join(out, mode + ".err"), "w") as e:
        rc = subprocess.run([ktune, "compile", os.path.join(out, "slice.json"), "--all", "-j", jobs, "--json"],
                            stdout=o, stderr=e, env=env).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = json.load(open(os.path.join(out, mode + ".json")))["configurations"]
    same = sum(1 for r in rows if r.get("same_code"))
    res[mode] = (wall, cpu)
    print(f"reuse {mode:3}  rc={rc}  configurations={len(rows)}  shared={same}  wall={wall:.1f}s  cpu={cpu:.1f}s  "
          f"configs_per_s={len(rows) / wall:.3f}  configs_per_cpu_s={len(rows) / cpu:.3f}  (-j {jobs})", flush=True)
off, on = cubins("off"), cubins("on")
common = set(off) & set(on)
print(f"speed-up: wall {res['off'][0] / res['on'][0]:.2f}x, cpu {res['off'][1] / res['on'][1]:.2f}x;  "
      f"cubins compared: {len(common)}, different: {sum(1 for k in common if off[k] != on[k])}")
PY
