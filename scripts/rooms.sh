#!/usr/bin/env bash
# The rooms of the library folders, as a Markdown table for
# docs/architecture.md: each folder's .cpp count and lines, and its longest
# function. The rules (at most 12 .cpp a folder, none over 500 lines, no
# function over 80 lines unless it is a table) are marked where broken: a
# count or a length in bold. `--long` lists every function over 80 lines.
#
# A function is found the rough way, by the layout every file here keeps:
# its signature starts in the first column and its body closes with a `}` in
# the first column. Member functions defined inside a class are not seen.
set -euo pipefail
cd "$(dirname "$0")/.."
long=0
[[ ${1:-} == --long ]] && long=1

folders=$(find search db tuner python/src -name '*.cpp' -exec dirname {} \; | sort -u)

# Every function at the first column: "LINES FILE:LINE NAME".
functions() {
  awk '
    FNR == 1 { infn = 0; sig = "" }
    infn { if ($0 ~ /^}/) { printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name; infn = 0; sig = "" } next }
    /^[ \t]*$/ || /^(#|\/\/|namespace|struct|class|enum|union|using|typedef|static_assert|template|extern "C" \{|\})/ { if ($0 !~ /^template/) sig = ""; next }
    /^[A-Za-z_~]/ { if (sig == "") { sig = $0; sigstart = FNR } else sig = sig " " $0 }
    /^[ \t]/ && sig != "" { sig = sig " " $0 }
    sig != "" && /;[ \t]*$/ && sig !~ /\{/ { sig = ""; next }
    sig != "" && /\{[ \t]*$/ {
      if (sig ~ /\(/ && sig !~ /=[ \t]*\{[ \t]*$/) {
        infn = 1; start = sigstart
        head = sig; sub(/\(.*/, "", head); n = split(head, w, /[ \t*&]+/); name = w[n]
      }
      sig = ""
    }
  ' "$@"
}

if ((long)); then
  for f in $folders; do functions "$f"/*.cpp; done | awk '$1 > 80' | sort -rn
  exit 0
fi

echo "| folder | .cpp | lines | largest .cpp | longest function | its lines | functions over 80 lines |"
echo "| --- | ---: | ---: | --- | --- | ---: | ---: |"
for f in $folders; do
  n=$(ls "$f"/*.cpp | wc -l)
  lines=$(cat "$f"/*.cpp | wc -l)
  read -r big_lines big_file < <(wc -l "$f"/*.cpp | grep -v ' total$' | sort -rn | head -1)
  read -r fn_lines fn_where fn_name < <(functions "$f"/*.cpp | sort -rn | head -1 || true)
  over=$(functions "$f"/*.cpp | awk '$1 > 80' | wc -l)
  ((n > 12)) && n="**$n**"
  ((big_lines > 500)) && big_lines="**$big_lines**"
  ((${fn_lines:-0} > 80)) && fn_lines="**$fn_lines**"
  echo "| \`$f/\` | $n | $lines | \`$(basename "$big_file")\` $big_lines | \`${fn_name:-}\` (\`$(basename "${fn_where%%:*}")\`) | ${fn_lines:-} | $over |"
done
