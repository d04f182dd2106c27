#!/usr/bin/env bash
# The layering of docs/architecture.md, checked on the include graph itself.
#
# Every library puts the repository root on its include path, so the compiler
# lets any file include any header; this check is what keeps a lower layer
# from using a higher one. It reads the `#include` lines of every C++ file in
# the library folders and fails, naming file and line, when a file includes a
# header of a folder its layer may not use, or a CUDA header (or another
# library's header) its part of the tree must never see. CTest runs it
# (`layering`, tests/CMakeLists.txt); by hand: scripts/check_layers.sh [ROOT].
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"

# The one table of allowed edges: a folder, then the folders whose headers it
# may include directly. What those may include, it may include too (the
# closure), and every folder may include its own headers and include/ktune/
# (the installed headers, which need only the standard library). A folder
# with C++ files that is missing here fails the check: a new folder takes its
# place in the layering by a line in this table.
layers='
search/expr             include/ktune
search/space            search/expr
search/strategy         search/space
search/strategy/evolve  search/strategy
search/strategy/model   search/strategy
search                  search/strategy/evolve search/strategy/model
db/record               search/expr
db                      db/record
db/interchange          db
db/export               db
tuner/base              search/expr
tuner/spec              tuner/base search/space
tuner/compile           tuner/base
tuner/gpu               tuner/compile db/record
tuner/build             tuner/spec tuner/compile db/record
tuner/tune              tuner/build tuner/gpu db/interchange search
tuner/mpi               tuner/tune
tuner/cli/print         tuner/tune
tuner/cli               tuner/cli/print tuner/mpi db/export
tuner/runtime           tuner/build tuner/gpu db/interchange db/export
python/src              tuner/cli tuner/runtime
'

# System headers a part of the tree never includes (an extended regular
# expression on the path between the angle brackets): search/ is pure C++,
# db/ sees SQLite and JSON but never CUDA.
cuda='^(cuda|nvrtc|cupti|nvml|nvtx|nvToolsExt|cublas|cufft|curand|nvPTXCompiler)'
forbidden_system="
search  $cuda|^(sqlite3|zlib)\\.h|^(nlohmann|yaml-cpp|CLI|nanobind)/|^mpi\\.h
db      $cuda|^(yaml-cpp|CLI|nanobind)/|^mpi\\.h
"

folders=$(find search db tuner python/src -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.inc' -o -name '*.cuh' \) \
            -exec dirname {} \; | sort -u)
files=()
for f in $folders; do
  for s in "$f"/*.cpp "$f"/*.h "$f"/*.inc "$f"/*.cuh; do
    [[ -f $s ]] && files+=("$s")
  done
done
# Headers of the repository, so that an include resolves to the folder that holds it.
known=$(find search db tuner python/src include -type f \( -name '*.h' -o -name '*.inc' -o -name '*.cuh' -o -name '*.in' \))

awk -v layers="$layers" -v forbidden="$forbidden_system" -v folders="$folders" -v known="$known" '
function dir(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "" }
BEGIN {
  n = split(layers, rows, "\n")
  for (i = 1; i <= n; i++) {
    if (split(rows[i], w, /[ \t]+/) < 1 || w[1] == "") continue
    inTable[w[1]] = 1
    for (j = 2; j in w; j++) if (w[j] != "") edge[w[1], w[j]] = 1
  }
  # The closure of the table: may[a, b] when a may include b.
  for (a in inTable) { may[a, a] = 1; may[a, "include/ktune"] = 1 }
  for (k in edge) may[k] = 1
  do {
    changed = 0
    for (k in may) {
      split(k, ab, SUBSEP)
      for (c in inTable) if ((ab[2], c) in may && !((ab[1], c) in may)) { may[ab[1], c] = 1; changed = 1 }
      if ((ab[2], "include/ktune") in may && !((ab[1], "include/ktune") in may)) { may[ab[1], "include/ktune"] = 1; changed = 1 }
    }
  } while (changed)
  n = split(forbidden, rows, "\n")
  for (i = 1; i <= n; i++) if (split(rows[i], w, /[ \t]+/) >= 2) sys[w[1]] = w[2]
  n = split(known, rows, "\n")
  for (i = 1; i <= n; i++) isKnown[rows[i]] = 1
  n = split(folders, rows, "\n")
  for (i = 1; i <= n; i++)
    if (rows[i] != "" && !(rows[i] in inTable)) {
      printf "%s/: a folder with C++ files that has no row in the layer table (scripts/check_layers.sh)\n", rows[i]
      bad++
    }
}
FNR == 1 { from = dir(FILENAME); raw = "" }
{
  line = $0
  # Source text in raw strings (kernels compiled at run time) is not this file'"'"'s include.
  if (raw != "") { if (index(line, raw)) raw = ""; next }
  if (match(line, /R"[^( ]*\(/)) {
    close_ = ")" substr(line, RSTART + 2, RLENGTH - 3) "\""
    if (!index(substr(line, RSTART + RLENGTH), close_)) { raw = close_; next }
  }
  if (!match(line, /^[ \t]*#[ \t]*include[ \t]*[<"][^">]+[">]/)) next
  spec = line; sub(/^[ \t]*#[ \t]*include[ \t]*/, "", spec)
  quoted = substr(spec, 1, 1) == "\""
  path = substr(spec, 2); sub(/[">].*/, "", path)
  # The folder whose header this is: the repository root, include/, or the
  # including folder (a bare name); otherwise a system header.
  to = ""
  if (path in isKnown || dir(path) in inTable) to = dir(path)
  else if (("include/" path) in isKnown) to = "include/" dir(path)
  else if (quoted && (from "/" path) in isKnown) to = dir(from "/" path)
  if (to == "") {
    top = from; sub(/\/.*/, "", top)
    if (top in sys && path ~ sys[top]) {
      printf "%s:%d: %s/ includes <%s>, a header its part of the tree never sees\n", FILENAME, FNR, top, path
      bad++
    }
    next
  }
  if (!((from, to) in may)) {
    printf "%s:%d: %s includes \"%s\" of %s/, which its layer may not use\n", FILENAME, FNR, from, path, to
    bad++
  }
}
END {
  if (bad) { printf "%d include(s) break the layering; the table is in scripts/check_layers.sh, the layers in docs/architecture.md\n", bad; exit 1 }
  print "layering: every include follows the table"
}
' "${files[@]}"
