#!/bin/sh
# The configuration lines compile_phases reads, from a T1 file: every valid
# configuration (its Conditions are Python expressions), or N of them drawn
# with a seed; then build/bench/compile_phases on the T1's kernel.
#
#   bench/studies/compile_phases.sh BUILD T1.json [N SEED] [--ir-only]
#
# e.g. the phase table:        bench/studies/compile_phases.sh build HUB/convolution_milo.json 10 22
#      distinct programs:      bench/studies/compile_phases.sh build HUB/convolution_milo.json --ir-only |
#                                cut -f3 | tail -n +2 | sort -u | wc -l
set -eu
BUILD=$1; T1=$2; shift 2
N=0; SEED=0; FLAG=""
if [ $# -ge 2 ] && [ "$1" != "--ir-only" ]; then N=$1; SEED=$2; shift 2; fi
if [ $# -ge 1 ]; then FLAG=$1; fi
python3 - "$T1" "$N" "$SEED" <<'PY' > "${TMPDIR:-/tmp}/compile_phases.$$.txt"
import itertools, json, random, sys
t1, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
spec = json.load(open(t1))
params = spec["ConfigurationSpace"]["TuningParameters"]
names = [p["Name"] for p in params]
conds = [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]
lines = []
for values in itertools.product(*[eval(p["Values"]) for p in params]):
    env = dict(zip(names, values))
    if all(eval(c, {}, env) for c in conds):
        lines.append(" ".join(f"{k}={v}" for k, v in env.items()))
if n:
    random.seed(seed)
    lines = random.sample(lines, n)
print("\n".join(lines))
PY
KS=$(python3 -c "import json,sys; k=json.load(open(sys.argv[1]))['KernelSpecification']; print(k['KernelFile'], k['KernelName'], ' '.join(k.get('CompilerOptions', [])))" "$T1")
set -- $KS
FILE=$1; NAME=$2; STD=$(echo "${3:--std=c++17}" | sed 's/^-std=//')
"$BUILD/bench/compile_phases" "$(dirname "$T1")/$FILE" "$NAME" "$STD" $FLAG < "${TMPDIR:-/tmp}/compile_phases.$$.txt"
rm -f "${TMPDIR:-/tmp}/compile_phases.$$.txt"
