#!/bin/sh
# Installs onnxruntime-node (ONNX Runtime's CPU engine for node) into DIR (default build/ort)
# unless it is there and loads. Benchmarks only: never part of the build or the tests.
#   bench/ort/install.sh [DIR] [VERSION]
# --ignore-scripts skips the package's postinstall, which only fetches optional CUDA files from
# outside the npm registry; the CPU binding and libonnxruntime.so ship inside the package.
set -u
DIR=${1:-build/ort}
VERSION=${2:-1.30.0}
MODULE="$DIR/node_modules/onnxruntime-node"

loads() {
  node -e "require(require('path').resolve(process.argv[1]))" "$MODULE" 2>/dev/null
}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "bench/ort/install.sh: node and npm are needed (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
if [ -d "$MODULE" ] && loads; then
  exit 0
fi
mkdir -p "$DIR" || exit 1
echo "installing onnxruntime-node@$VERSION into $DIR (npm install --ignore-scripts)"
if ! npm install --prefix "$DIR" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "onnxruntime-node@$VERSION"; then
  echo "bench/ort/install.sh: npm could not install onnxruntime-node@$VERSION from" \
       "$(npm config get registry); the ONNX Runtime columns need it (is the registry" \
       "reachable from this machine?)" >&2
  exit 1
fi
if ! loads; then
  echo "bench/ort/install.sh: onnxruntime-node installed into $DIR but its native binding" \
       "does not load on this machine:" >&2
  node -e "require(require('path').resolve(process.argv[1]))" "$MODULE" >&2
  exit 1
fi
