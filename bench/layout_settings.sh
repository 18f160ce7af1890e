#!/bin/sh
# The four settings of issue 16 on every model of a folder, measured with verisub-run (oneDNN,
# costs measured on this CPU, cached in cost tables): rewrites only (--optimize, oneDNN's own
# layout policy), layouts only (--layout dp), rewrites then layouts (--optimize --layout dp) and
# joint (--layout joint: the search scores graphs by their DP-optimal layout cost); on a CPU with
# native bfloat16 kernels a fifth, joint with precision as a layout (--precision bf16, output
# error within 1e-2). The settings alternate within each round; a cell is the median over the
# rounds of each run's median.
# usage: bench/layout_settings.sh BUILD MODELS_DIR [ROUNDS] [RUNS] [THREADS]
set -u
build=$1 dir=$2 rounds=${3:-2} runs=${4:-10} threads=${5:-1}
run="$build/session/verisub-run"
[ -x "$run" ] || { echo "layout_settings: $run is not built" >&2; exit 1; }
ls "$dir"/*.onnx > /dev/null 2>&1 || { echo "layout_settings: no .onnx in $dir (make dev-models)" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
settings="rewrites:--optimize,--layout=backend layouts:--layout=dp rewrites+layouts:--optimize,--layout=dp joint:--layout=joint"
first=$(ls "$dir"/*.onnx | head -1)
bf16="joint, bf16"
if "$run" "$first" --layout dp --precision bf16 --runs 1 --warmup 0 > "$tmp/probe" 2>&1; then
  settings="$settings joint+bf16:--layout=joint,--precision=bf16"
elif grep -q "no native bfloat16" "$tmp/probe"; then
  bf16="(no bf16 kernels)"
else
  echo "layout_settings: --precision bf16 failed:" >&2; tail -3 "$tmp/probe" >&2; exit 1
fi
echo "== layout settings: verisub-run, $threads thread(s), $rounds rounds x $runs runs, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-20s %16s %16s %20s %16s %16s\n' model "rewrites only" "layouts only" "rewrites, layouts" joint "$bf16"
for m in "$dir"/*.onnx; do
  name=$(basename "$m" .onnx)
  r=1
  while [ "$r" -le "$rounds" ]; do
    for s in $settings; do
      key=${s%%:*} flags=$(echo "${s#*:}" | tr ',=' '  ')
      # shellcheck disable=SC2086
      "$run" "$m" $flags --threads "$threads" --runs "$runs" --warmup 2 > "$tmp/out" 2>&1 ||
        { echo "layout_settings: $name $key failed:" >&2; tail -3 "$tmp/out" >&2; exit 1; }
      sed -n 's/^verisub-run: median_ms=\([0-9.]*\).*/\1/p' "$tmp/out" >> "$tmp/$name.$key"
    done
    r=$((r + 1))
  done
  cells=""
  for s in $settings; do
    key=${s%%:*}
    med=$(sort -n "$tmp/$name.$key" | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}')
    cells="$cells $med"
  done
  # shellcheck disable=SC2086
  set -- $cells
  base=$1
  line=$(printf '%-20s %10.2f ms  ' "$name" "$1")
  shift
  for c in "$@"; do
    line="$line $(printf '%10.2f (%.2f)' "$c" "$(echo "$c $base" | awk '{print $1/$2}')")"
  done
  echo "$line"
done
echo "(ratio) = setting / rewrites only, below 1 is faster; medians in ms"
