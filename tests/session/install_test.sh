#!/bin/sh
# The install tree as a product meets it: `cmake --install` into a fresh prefix, the embed
# example (examples/embed) configured and built against it as a separate CMake project, run on a
# model with the installed rules; the library links no Z3; pkg-config and the Python module
# work from the prefix. Usage: install_test.sh BUILD_DIR SOURCE_DIR PYTHON
set -eu
build=$1 src=$2 python=${3:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
lib=$(ls "$tmp"/prefix/lib*/libverisub.so.0 2>/dev/null | head -1)
[ -n "$lib" ] || { echo "no libverisub.so.0 installed"; exit 1; }
test -f "$tmp/prefix/include/verisub/verisub.h"
test -f "$tmp/prefix/share/verisub/rules/taso.pb"
if ldd "$lib" | grep -q -i z3; then echo "libverisub links Z3"; exit 1; fi
# Only the public API is exported.
if nm -D --defined-only "$lib" | grep -q -E " T _ZN7verisub(7Session6Create|8OptimizeE|7runtime14ImportOnnxFile)"; then
  echo "libverisub exports internal symbols"; exit 1
fi
cmake -S "$src/examples/embed" -B "$tmp/embed" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$tmp/embed-configure.log"
cmake --build "$tmp/embed" > "$tmp/embed-build.log"
cd "$src"
out=$(LD_LIBRARY_PATH=$(dirname "$lib") "$tmp/embed/embed" data/models/squeezenet1_1.onnx --runs 3)
echo "$out"
echo "$out" | grep -q "rewrites" || { echo "the embedded session did not optimize"; exit 1; }
echo "$out" | grep -q "^output output \[1,10\]" || { echo "unexpected output"; exit 1; }
# A missing model is an error naming it, exit 1.
if LD_LIBRARY_PATH=$(dirname "$lib") "$tmp/embed/embed" no_such.onnx 2> "$tmp/err"; then exit 1; fi
grep -q "no_such.onnx" "$tmp/err"
# pkg-config, relocated with the prefix.
if command -v pkg-config > /dev/null; then
  PKG_CONFIG_PATH=$(dirname "$lib")/pkgconfig pkg-config --cflags --libs verisub | grep -q -- "-lverisub"
fi
# The Python module from the prefix.
site=$(ls -d "$tmp"/prefix/lib*/python3/dist-packages 2>/dev/null | head -1)
if [ -n "$site" ] && [ -d "$site/verisub" ]; then
  PYTHONPATH=$site "$python" -c 'import verisub; print("python:", verisub.InferenceSession("data/models/squeezenet1_1.onnx", optimize=False).get_inputs())'
fi
echo "install test: ok"
