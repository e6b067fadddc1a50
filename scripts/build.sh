#!/usr/bin/env bash
# Builds the native library + doctest suite, the wasm modules (engine relaxed SIMD, SIMD128 and
# scalar, their threaded twins, the model add-on in relaxed SIMD and SIMD128) into web/dist/, the
# fuzz harness, the minified elements (web/dist/elements/), the single-file bundle and the packed
# model file. Incremental: a second run only rebuilds what changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/.build"
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs Debian's acorn

configure() {  # dir, then cmake arguments; only when the build folder is new
  local dir="$1"; shift
  [ -f "$dir/build.ninja" ] || "$@" -S "$ROOT" -B "$dir" -G Ninja >/dev/null
}

configure "$BUILD/native" cmake
configure "$BUILD/wasm-simd" emcmake cmake -DATTNLENS_SIMD=ON \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node;--no-experimental-fetch"
# SIMD128 + relaxed SIMD, compiled by Debian's LLVM 19 under the same emcc (CMakeLists.txt); its
# tests need V8's relaxed-SIMD flag (Node 20 has it off by default).
configure "$BUILD/wasm-relaxed" emcmake cmake -DATTNLENS_SIMD=ON -DATTNLENS_RELAXED_SIMD=ON \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node;--experimental-wasm-relaxed-simd;--no-experimental-fetch"
configure "$BUILD/wasm-scalar" emcmake cmake -DATTNLENS_SIMD=OFF \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node;--no-experimental-fetch"

# The threaded engine builds (-pthread: a pool of Web Workers, for Node and cross-origin-isolated
# pages), SIMD128 and relaxed SIMD; only the engine module is built in them (no model, no tests).
configure "$BUILD/wasm-simd-threads" emcmake cmake -DATTNLENS_SIMD=ON -DATTNLENS_THREADS=ON \
  -DATTNLENS_TESTS=OFF
configure "$BUILD/wasm-relaxed-threads" emcmake cmake -DATTNLENS_SIMD=ON -DATTNLENS_RELAXED_SIMD=ON \
  -DATTNLENS_THREADS=ON -DATTNLENS_TESTS=OFF

# The libFuzzer harness: clang, ASan + UBSan on the whole core (tests/fuzz; run by scripts/test.sh).
configure "$BUILD/fuzz" cmake -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DATTNLENS_FUZZ=ON -DATTNLENS_TESTS=OFF

for dir in native wasm-simd wasm-relaxed wasm-scalar; do
  echo "[build] $dir" >&2
  cmake --build "$BUILD/$dir" -- -j"$(nproc)" | { grep -vE '^\[[0-9]+/[0-9]+\] ' || true; }
done
for dir in wasm-simd-threads wasm-relaxed-threads; do
  echo "[build] $dir" >&2
  cmake --build "$BUILD/$dir" --target attnlens_wasm -- -j"$(nproc)" | { grep -vE '^\[[0-9]+/[0-9]+\] ' || true; }
done
echo "[build] fuzz" >&2
cmake --build "$BUILD/fuzz" --target attnlens_fuzz attnlens_fuzz_llama -- -j"$(nproc)" | { grep -vE '^\[[0-9]+/[0-9]+\] ' || true; }

# The minified builds for pages, with source maps (Rollup + esbuild, scripts/build-common.mjs),
# each skipped when up to date: the elements and the engine API in web/dist/elements/ (package
# entries `attnlens/dist/…`), and the single file (engine + elements + inlined wasm) behind
# `attnlens/single`.
echo "[build] minified elements" >&2
node "$ROOT/scripts/build-elements.mjs"
echo "[build] single-file bundle" >&2
node "$ROOT/scripts/build-single.mjs"

# The USE-lite model for browsers: the installed npm package's TF.js files packed into
# web/dist/use-lite.bin (git-ignored; skipped when up to date).
echo "[build] model file" >&2
node "$ROOT/scripts/model/pack.mjs"
