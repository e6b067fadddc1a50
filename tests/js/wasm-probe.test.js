// The benchmarks' independent ceiling probe (scripts/bench/wasm-probe.js): the hand-encoded
// module validates, and its chains compute what they claim (x ← 0.999·x + 0.001 per lane,
// checked against float64), for mul+add and, where relaxed SIMD validates, fused multiply-add.
// scripts/test.sh runs this file again under --experimental-wasm-relaxed-simd with
// ATTNLENS_TEST_BUILDS naming relaxed: there the fused probe must exist and is checked, never
// passed over. No timing is asserted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { independentCeiling, probeBytes, probeFunction } from '../../scripts/bench/wasm-probe.js';

// Lane 0 of chain c starts at 0.01·c (rounded to float32); after `steps` steps of x ← a·x + b.
function expected(chains, steps) {
  let sum = 0;
  for (let c = 0; c < chains; c++) {
    let x = Math.fround(0.01 * c);
    for (let i = 0; i < steps; i++) x = 0.999 * x + 0.001;
    sum += x;
  }
  return sum;
}

const relaxed = process.execArgv.includes('--experimental-wasm-relaxed-simd');
const askedRelaxed = process.env.ATTNLENS_TEST_BUILDS?.split(',').includes('relaxed') ?? false;
if (askedRelaxed && !relaxed)
  throw new Error('ATTNLENS_TEST_BUILDS names relaxed, but node runs without --experimental-wasm-relaxed-simd');
// Fused multiply-add is checked wherever relaxed SIMD validates; with V8's flag it must.
const fusedHere = relaxed || probeFunction(12, true) !== null;

describe('independent ceiling probe (hand-encoded wasm)', () => {
  it('validates and computes its chains', () => {
    for (const chains of [8, 12, 16, 24]) {
      assert.ok(WebAssembly.validate(probeBytes(chains, false)), `${chains} chains mul+add`);
      for (const fused of fusedHere ? [false, true] : [false]) {
        const probe = probeFunction(chains, fused);
        assert.equal(typeof probe, 'function', `${chains} chains ${fused ? 'fused' : 'mul+add'} validates`);
        for (const steps of [0, 1, 5, 3000])
          assert.ok(Math.abs(probe(steps) - expected(chains, steps)) < 1e-4 * chains, `${chains} ${fused} ${steps}`);
      }
    }
    // With V8's relaxed-SIMD flag the fused module must validate (its opcode is the final one).
    if (relaxed) assert.equal(typeof probeFunction(12, true), 'function', 'f32x4.relaxed_madd validates');
  });

  it('reports the best chain count per instruction', () => {
    const c = independentCeiling({ iterations: 1e4, calls: 2, warmupCalls: 1, warmupMs: 0 });
    assert.deepEqual(Object.keys(c.mulAdd.byChains).map(Number), [8, 12, 16, 24]);
    assert.equal(c.mulAdd.gflops, Math.max(...Object.values(c.mulAdd.byChains)));
    assert.ok(c.mulAdd.gflops >= c.mulAdd.median && c.mulAdd.median >= c.mulAdd.min && c.mulAdd.min > 0);
    assert.equal(c.fma === null, !fusedHere);
    if (fusedHere) {
      assert.deepEqual(Object.keys(c.fma.byChains).map(Number), [8, 12, 16, 24]);
      assert.equal(c.fma.gflops, Math.max(...Object.values(c.fma.byChains)));
      assert.ok(c.fma.gflops >= c.fma.median && c.fma.median >= c.fma.min && c.fma.min > 0);
    }
  });
});
