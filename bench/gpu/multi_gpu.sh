#!/bin/sh
# Brute force over a template's whole space on one GPU, on all GPUs of the
# host (`--gpus all`) and under `mpirun -n NGPU` (one rank per GPU), each from
# an empty database and an empty compile cache; prints wall time,
# configurations per second, efficiency per GPU against the one-GPU run, and
# the optimum each found (issue 25). Run on a GPU host with several GPUs:
#   bench/gpu/multi_gpu.sh build/ktune OUT [SPEC]   (default templates/sgemm/sgemm.yaml)
# MG_TIMEOUT (seconds, default 300) limits each run; MG_RUNS (default
# "one all mpi") picks the runs, so that a long space can be split over
# device calls; MG_ONE_RATE (configurations per second of a one-GPU run made
# before) then stands in for the one-GPU run in the efficiency column.
set -u
KTUNE=$1; OUT=$2; SPEC=${3:-templates/sgemm/sgemm.yaml}
mkdir -p "$OUT"
NGPU=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
echo "spec $SPEC; $NGPU GPUs; $(nproc) cores"
run() {  # name, then the command's words
  name=$1; shift
  rm -rf "/tmp/mg-cache-$name" "/tmp/mg-$name.db"
  t0=$(date +%s.%N)
  KTUNE_CACHE_DIR="/tmp/mg-cache-$name" timeout -s INT -k 30 "${MG_TIMEOUT:-300}" "$@" "$SPEC" --strategy brute_force --max-fevals 0 --no-prior \
    --json --db "/tmp/mg-$name.db" > "$OUT/$name.json" 2> "$OUT/$name.err"
  rc=$?
  t1=$(date +%s.%N)
  echo "$name $rc $t0 $t1" >> "$OUT/walls"
}
: > "$OUT/walls"
for r in ${MG_RUNS:-one all mpi}; do
  case $r in
    one) run one "$KTUNE" tune --gpu 0 ;;
    all) run all "$KTUNE" tune --gpus all ;;
    mpi)
      if command -v mpirun > /dev/null; then
        # Open MPI binds each of 2 or fewer ranks to one core: its compile
        # processes would share that core.
        run mpi mpirun --allow-run-as-root --bind-to none -n "$NGPU" "$KTUNE" tune
      else
        echo "mpi 127 0 0" >> "$OUT/walls"; echo "mpirun: not on this host" > "$OUT/mpi.err"
      fi ;;
  esac
done
python3 - "$OUT" "$NGPU" "${MG_ONE_RATE:-0}" <<'PY'
import json, sys, os
out, ngpu, one_rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
walls = {}
for line in open(os.path.join(out, "walls")):
    name, rc, t0, t1 = line.split()
    walls[name] = (int(rc), float(t1) - float(t0))
base = one_rate or None
print("| run | GPUs | workers | exit | wall s | configurations | per s | efficiency per GPU | compile s (summed) | GPU s (summed) | best configuration | best ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, gpus in (("one", 1), ("all", ngpu), ("mpi", ngpu)):
    if name not in walls: continue
    rc, wall = walls[name]
    try:
        j = json.load(open(os.path.join(out, name + ".json")))
    except Exception:
        print(f"| {name} | {gpus} | - | {rc} | {wall:.1f} | - | - | - | - | - | (no JSON: {name}.err) | - |")
        continue
    n = j.get("evaluations")
    best = (j.get("best") or [{}])[0]
    rate = (n or 0) / wall if wall else 0
    if name == "one": base = rate
    eff = rate / (base * gpus) if base else 0
    ts = j.get("time_split") or {}
    print(f"| {name} | {gpus} | {j.get('workers')} | {rc} | {wall:.1f} | {n} | {rate:.2f} | {eff:.2f} | "
          f"{ts.get('compile_s', 0):.1f} | {ts.get('gpu_s', 0):.1f} | {json.dumps(best.get('config'))} | {best.get('time_ms')} |")
PY
