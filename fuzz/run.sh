#!/bin/sh
# Runs one libFuzzer target for a given time:
#   fuzz/run.sh TARGET SECONDS [libFuzzer options...]
# TARGET is spec_yaml, spec_t1, expr, kerneltuner or t4 (docs/fuzzing.md).
# Builds build-fuzz/ with clang (AddressSanitizer, UndefinedBehaviorSanitizer,
# libFuzzer) on first use; `./scripts/setup.sh --fuzz` installs clang and
# libFuzzer's runtime. The corpus grows in build-fuzz/corpus/TARGET, seeded
# from fuzz/corpus/TARGET and the project's own specs and results files; a
# crash, hang, leak or sanitizer report stops the run (exit status not 0)
# and leaves the input in build-fuzz/artifacts/. The last lines printed are
# the run's figures: executions, executions per second, coverage (cov, ft).
set -eu
[ $# -ge 2 ] || { echo "usage: fuzz/run.sh TARGET SECONDS [libFuzzer options...]" >&2; exit 2; }
target=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${KTUNE_FUZZ_BUILD:-$root/build-fuzz}
case $target in
  spec_yaml) dict=yaml.dict; seeds="tests/data/specs/good/*.yaml tests/data/specs/bad/*.yaml templates/*/*.yaml examples/vector_add/*.yaml" ;;
  spec_t1) dict=json.dict; seeds="tests/data/specs/t1/*.json tests/data/specs/good/*.json tests/data/specs/bad/*.json" ;;
  expr) dict=expr.dict; seeds="" ;;
  kerneltuner) dict=json.dict; seeds="tests/data/kt/*.json examples/data/vector_add_h100.json examples/data/gemm_wgmma_h100.json" ;;
  t4) dict=json.dict; seeds="tests/data/t4/*.json" ;;
  *) echo "fuzz/run.sh: unknown target '$target' (spec_yaml, spec_t1, expr, kerneltuner, t4)" >&2; exit 2 ;;
esac

launcher=""
command -v ccache >/dev/null 2>&1 && launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DKTUNE_FUZZ=ON \
  -DKTUNE_BUILD_TESTS=OFF -DKTUNE_BUILD_BENCH=OFF $launcher >/dev/null
cmake --build "$build" --target "fuzz_$target"

corpus="$build/corpus/$target"
project="$build/seeds/$target"
mkdir -p "$corpus" "$project" "$build/artifacts"
if [ -n "$seeds" ]; then
  for f in $(cd "$root" && ls $seeds); do cp "$root/$f" "$project/$(echo "$f" | tr / _)"; done
fi

log="$build/fuzz-$target.log"
status=0
"$build/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -dict="$here/dict/$dict" -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 \
  "$corpus" "$here/corpus/$target" "$project" "$@" >"$log" 2>&1 || status=$?
grep -E "^#[0-9]+.*(DONE|pulse|NEW|REDUCE)" "$log" | tail -1 || true
grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$log" || true
if [ "$status" -ne 0 ]; then
  echo "fuzz/run.sh: $target stopped with status $status; see $log and $build/artifacts/" >&2
  tail -40 "$log" >&2
fi
exit "$status"
