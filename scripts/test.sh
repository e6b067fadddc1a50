#!/usr/bin/env bash
# Runs every test: doctest natively and in wasm (SIMD128, relaxed-SIMD and scalar builds) under
# ctest, two short fuzz passes, the JavaScript reference tests on the relaxed-SIMD builds, then the
# JavaScript tests in Node and the browser tests (headless Chromium; Firefox ESR and WebKitGTK in
# the cross-engine suite) under node's test runner.
# Expects scripts/setup.sh and scripts/build.sh to have run (npm test does both).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

for dir in native wasm-simd wasm-relaxed wasm-scalar; do
  echo "== C++ tests: $dir"
  ctest --test-dir ".build/$dir" --output-on-failure
done

# A short fuzz pass over the C++ core (tests/fuzz/fuzz_core.cpp). The corpus in .build/fuzz/corpus
# grows from run to run; every input that once found a bug (tests/fuzz/regressions/) is replayed
# first. The seed is fixed so that a test run is repeatable: a fresh checkout explores the same
# inputs every time, and new findings come from long runs with random seeds (docs/testing.md: fuzzing).
# ATTNLENS_FUZZ_SECONDS sets the length, ATTNLENS_FUZZ_SEED the seed.
FUZZ_SEED="${ATTNLENS_FUZZ_SEED:-20261201}"
echo "== fuzzing the C++ core: libFuzzer + ASan + UBSan, ${ATTNLENS_FUZZ_SECONDS:-20} s, seed $FUZZ_SEED"
mkdir -p .build/fuzz/corpus .build/fuzz/findings
if ! .build/fuzz/attnlens_fuzz -max_total_time="${ATTNLENS_FUZZ_SECONDS:-20}" -timeout=20 -seed="$FUZZ_SEED" \
     -print_final_stats=1 -artifact_prefix=.build/fuzz/findings/ .build/fuzz/corpus tests/fuzz/regressions/core \
     >.build/fuzz/last-run.log 2>&1; then
  grep -E -A3 'finding|ERROR|runtime error|SUMMARY|Test unit written' .build/fuzz/last-run.log >&2 || true
  echo "fuzzing found a problem: full log .build/fuzz/last-run.log, input in .build/fuzz/findings/" >&2
  exit 1
fi
grep -E '^(Done |stat::number_of_executed_units|stat::new_units_added)|INITED' .build/fuzz/last-run.log

# The same for the language-model loaders and tokenizer (tests/fuzz/fuzz_llama.cpp), corpus
# .build/fuzz/corpus-llama; ATTNLENS_FUZZ_SECONDS sets its length too.
echo "== fuzzing the LM loaders and tokenizer: libFuzzer + ASan + UBSan, ${ATTNLENS_FUZZ_SECONDS:-20} s, seed $FUZZ_SEED"
mkdir -p .build/fuzz/corpus-llama
if ! .build/fuzz/attnlens_fuzz_llama -max_total_time="${ATTNLENS_FUZZ_SECONDS:-20}" -timeout=20 -max_len=65536 \
     -seed="$FUZZ_SEED" -print_final_stats=1 -artifact_prefix=.build/fuzz/findings/ \
     .build/fuzz/corpus-llama $(ls -d tests/fuzz/regressions/llama 2>/dev/null) \
     >.build/fuzz/last-run-llama.log 2>&1; then
  grep -E -A3 'finding|ERROR|runtime error|SUMMARY|Test unit written' .build/fuzz/last-run-llama.log >&2 || true
  echo "fuzzing found a problem: full log .build/fuzz/last-run-llama.log, input in .build/fuzz/findings/" >&2
  exit 1
fi
grep -E '^(Done |stat::number_of_executed_units|stat::new_units_added)|INITED' .build/fuzz/last-run-llama.log

# The JavaScript reference tests on the relaxed-SIMD builds (engine, and the model add-on against
# TF.js): Node 20 validates relaxed SIMD only behind a V8 flag (the library never sets it), so
# these run in a process of their own with it. lm-reference: stories260K on the relaxed model
# module, against llama2.c's recorded text and the float64 reference. tiles: the timed choice of
# register tile. wasm-probe: the benchmarks' fused-multiply-add ceiling probe, which validates only here.
echo "== JavaScript reference tests on the relaxed-SIMD build (node --experimental-wasm-relaxed-simd)"
ATTNLENS_TEST_BUILDS=relaxed,relaxed-threads node --experimental-wasm-relaxed-simd --test --test-reporter=spec \
  tests/js/attention.test.js tests/js/model.test.js tests/js/lm-reference.test.js tests/js/tiles.test.js \
  tests/js/wasm-probe.test.js

# Browser tests: headless Chromium for the figures; tests/browser/engines.test.js runs the same
# checks in Chromium, Firefox ESR and WebKitGTK (its WebKitWebDriver under xvfb-run when there is no
# display), one session per engine and colour scheme; under CI a missing engine fails.
echo "== JavaScript and browser tests"
node --test --test-reporter=spec tests/js/*.test.js tests/browser/*.test.js tests/browser/elements/*.test.js
