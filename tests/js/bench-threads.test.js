// The benchmarks' threads section (scripts/bench/threads*.{js,mjs}) at a tiny size: ours threaded
// and single-thread and onnxruntime-web with 2 threads load, run and agree with ours, in Node and
// in a cross-origin-isolated Chromium page. No timing is asserted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { init } from 'attnlens';
import * as core from '../../scripts/bench/core.js';
import { buildModels } from '../../scripts/bench/onnx-models.js';
import { ortPeers } from '../../scripts/bench/peers.js';
import { formatThreads, runThreads, threadPeers } from '../../scripts/bench/threads.js';
import { runThreadsInBrowser } from '../../scripts/bench/threads-browser.mjs';

const ARGS = ['--sizes', '40', '--heads', '2', '--runs', '1', '--threads', '2'];
const IDS = ['attnlens', 'attnlens-threads', 'ort-plain', 'ort-mha', 'ort-attention23'];

describe('benchmark threads section (n = 40, h = 2, 2 threads)', () => {
  it('in Node: ours threaded and onnxruntime-web with 2 threads agree with ours', async () => {
    const peers = await threadPeers(init, 2);
    const ort = await import('onnxruntime-web');
    peers.push(...ortPeers(ort, (h, d) => buildModels(h, d), { threads: 2 }));
    const options = { ...core.parseArgs(ARGS.slice(0, 6)), warmupMs: 0 };
    const records = await runThreads({ options, peers });
    assert.deepEqual(records.map((r) => r.peer), IDS);
    for (const r of records) assert.ok(r.error === undefined && r.maxAbsDiff <= 1e-5 && r.ms > 0, `${r.peer}: ${r.error ?? r.maxAbsDiff}`);
    assert.equal(records[1].maxAbsDiff, 0, 'threaded is bit-identical to one thread');
    assert.match(formatThreads(records, { threads: 2, env: 'test' }), /\| 2 \| 40 \| simd \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \((plain|mha|attention23)\) \| [\d.]+ \|/);
  });

  it('in an isolated Chromium page: the same contestants, all timed', async () => {
    const text = await runThreadsInBrowser(ARGS);
    assert.match(text, /cross-origin isolated: true/);
    assert.match(text, /\| 2 \| 40 \| relaxed \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \((plain|mha|attention23)\) \| [\d.]+ \|/);
    assert.doesNotMatch(text, /Not timed/);
    const lines = text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.peer), IDS);
  });
});
