#!/usr/bin/env bash
# Runs every test: doctest natively and in wasm (SIMD and scalar builds) under ctest, then the
# JavaScript tests in Node and the browser tests in headless Chromium under node's test runner.
# Expects scripts/setup.sh and scripts/build.sh to have run (npm test does both).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

for dir in native wasm-simd wasm-scalar; do
  echo "== C++ tests: $dir"
  ctest --test-dir ".build/$dir" --output-on-failure
done

echo "== JavaScript and browser tests"
node --test --test-reporter=spec tests/js/*.test.js tests/browser/*.test.js
