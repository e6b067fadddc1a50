// The benchmark (scripts/bench) at a tiny size: every contestant loads, runs and agrees with
// attnlens; in Node, and in headless Chromium with the frame test. No timing is asserted.
import os from 'node:os';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { loadPeers } from '../../scripts/bench/bench.mjs';
import { runInBrowser } from '../../scripts/bench/browser.mjs';
import * as core from '../../scripts/bench/core.js';

const options = { ...core.parseArgs(['--sizes', '32', '--heads', '2', '--runs', '1']), warmupMs: 0 };
// Every build the runtime runs: the relaxed one adds a SIMD128 row (Chromium; Node only with its
// relaxed-SIMD flag).
const expectedFor = (fastest) => ['attnlens', 'attnlens-weights', ...(fastest === 'relaxed' ? ['attnlens-simd'] : []),
  'attnlens-scalar', 'ort-plain', 'ort-mha', 'ort-attention23', 'tfjs-wasm', 'plain-js'];

function checkRecords(records, ceiling) {
  const fastest = records[0].build;
  const expected = expectedFor(fastest);
  assert.deepEqual(records.map((r) => r.peer), expected);
  for (const r of records) {
    assert.equal(r.error, undefined, `${r.peer}: ${r.error}`);
    assert.ok(r.maxAbsDiff <= 1e-5, `${r.peer} differs from attnlens by ${r.maxAbsDiff}`);
    assert.ok(r.ms > 0 && r.runs === 1, `${r.peer} was timed`);
  }
  const report = core.formatReport(records, { env: 'test', ceiling });
  assert.match(report, fastest === 'relaxed' ? /\| 2 \| 32 \| attnlens relaxed SIMD, output only \|/
    : /\| 2 \| 32 \| attnlens SIMD128, output only \|/);
  assert.match(report, /Ceiling, GFLOP\/s: the best of 8, 12, 16 and 24 independent f32x4 chains/);
  assert.match(report, /independent \(a hand-encoded module, scripts\/bench\/wasm-probe\.js\) mul\+add \d/);
  // Both probes ran, and the ceiling is the higher of the two per instruction.
  for (const op of ['mulAdd', ...(ceiling.ours.fma ? ['fma'] : [])]) {
    assert.ok(ceiling.ours[op].gflops > 0 && ceiling.independent[op].gflops > 0, op);
    assert.equal(ceiling[op].gflops, Math.max(ceiling.ours[op].gflops, ceiling.independent[op].gflops), op);
  }
  assert.equal(core.jsonLines(records, { runtime: 'node' }).split('\n').length, expected.length);
}

describe('benchmark smoke test (n = 32, h = 2)', () => {
  it('in Node: every peer agrees with attnlens', async () => {
    const { lens, peers } = await loadPeers(options.peers);
    const ceiling = core.measureCeiling(lens, { runs: 3, iterations: 1e5 });  // calls long enough for any clock
    assert.ok(ceiling.gflops > 0 && ceiling.mulAdd.gflops > 0);
    const records = await core.runBenchmark({ ...options, peers, ceiling });
    checkRecords(records, ceiling);
    assert.ok(records.find((r) => r.peer === 'attnlens').heapBytesPerCall > 0);
  });

  it('in headless Chromium: every peer agrees with attnlens, and the frame test runs', async () => {
    const result = await runInBrowser({ ...options, frame: { n: 64, h: 2, frames: 2 },
      heatmapFrames: { n: 24, h: 2, d: 8, redraws: 2, warmup: 1 } });
    checkRecords(result.records, result.ceiling);
    // Chromium validates relaxed SIMD: the fastest build and its fused multiply-add ceiling.
    assert.equal(result.records[0].build, 'relaxed');
    assert.ok(result.ceiling.fma.gflops > 0 && result.ceiling.end.fma.gflops > 0);
    assert.equal(result.frame.n, 64);
    assert.ok(result.frame.medianMs > 0);
    // The <attn-heatmap> frame: each change redrawn and split into compute and render.
    // In a fresh page, and in the benchmarks' page after everything else ran there.
    // The isolated fresh page (COOP/COEP) runs the figure on the threaded engine.
    if (os.cpus().length > 1) assert.ok(result.heatmapFramesIsolated.heap.threads > 1, JSON.stringify(result.heatmapFramesIsolated.heap));
    for (const frames of [result.heatmapFrames, result.heatmapFramesAfter, result.heatmapFramesIsolated]) {
      assert.deepEqual([frames.n, frames.h, frames.d, Object.keys(frames.changes)], [24, 2, 8, ['temperature', 'scale', 'mask']]);
      // At n = 24 the engine call can take less than the page clock's resolution (0.1 ms without
      // cross-origin isolation), so its share may read 0.
      for (const s of Object.values(frames.changes))
        assert.ok(s.bestMs > 0 && s.computeMs >= 0 && s.renderMs > 0,
          JSON.stringify(s));
      // Unjudged: a head switch right after a temperature change, a change in the Mean view.
      assert.deepEqual(Object.keys(frames.views), ['head after temperature', 'temperature, mean view']);
      for (const s of Object.values(frames.views)) assert.ok(s.bestMs > 0 && s.renderMs > 0, JSON.stringify(s));
    }
  });
});
