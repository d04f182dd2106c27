#!/bin/sh
# Records an exhaustive run of SPEC on the GPU of this host as a Kernel Tuner
# cache file (the format of examples/data/), every configuration verified and
# timed, every sample kept:
#
#   bench/gpu/record.sh KTUNE SPEC OUT_JSON [ktune tune options, e.g. --set n=4096]
#
# The measurements go to OUT_JSON's folder as <name>.db too; an existing one is
# resumed (configurations it holds are not measured again), so a run cut off by
# a time limit (KTUNE_RECORD_TIMEOUT seconds) is finished by running the same
# command again.
set -u
BIN=$1; SPEC=$2; OUT_JSON=$3; shift 3
DB="${OUT_JSON%.json}.db"
export KTUNE_CACHE_DIR=${KTUNE_CACHE_DIR:-/tmp/ktune-cache}
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
"$BIN" devices || exit 1
start=$(date +%s)
timeout "${KTUNE_RECORD_TIMEOUT:-86400}" "$BIN" tune "$SPEC" --strategy brute_force --max-fevals 0 --db "$DB" --json "$@" > "${OUT_JSON%.json}.tune.json"
rc=$?
echo "tune rc=$rc wall_s=$(( $(date +%s) - start ))"
kernel=$(sed -n 's/^ *"kernel": *"\([^"]*\)".*/\1/p' "${OUT_JSON%.json}.tune.json" | head -1)
"$BIN" export --format kernel-tuner ${kernel:+--kernel "$kernel"} --db "$DB" -o "$OUT_JSON" || exit 1
"$BIN" results "$SPEC" --db "$DB" --sort time --limit 5 "$@"
exit $rc
