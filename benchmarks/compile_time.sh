#!/usr/bin/env bash
# What including commscale costs a user: the best of 3 compile times (-O2, -std=c++20) of a file
# that includes only the named header, for the core header and the optional layers. Run from the
# repository root on a quiet machine: benchmarks/compile_time.sh [CXX]
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=${1:-${CXX:-c++}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-36s %10s %10s\n' header "wall (s)" "user (s)"
for h in commscale/units.hpp commscale/commscale.hpp commscale/io/cluster_json.hpp commscale/calibrate/fit.hpp; do
  printf '#include <%s>\nint main() { return 0; }\n' "$h" >"$tmp/t.cpp"
  best_wall=; best_user=
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %U' -o "$tmp/time" "$cxx" -std=c++20 -O2 -Iinclude -isystem /usr/include/eigen3 -c "$tmp/t.cpp" -o "$tmp/t.o"
    read -r wall user <"$tmp/time"
    if [ -z "$best_wall" ] || awk "BEGIN{exit !($wall < $best_wall)}"; then best_wall=$wall; best_user=$user; fi
  done
  printf '%-36s %10s %10s\n' "$h" "$best_wall" "$best_user"
done
