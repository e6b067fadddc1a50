// `npm run bench:models` (scripts/bench/models.mjs) at tiny shapes: the files are written, every
// contestant (ours, onnxruntime-web in Node at one and two threads, wllama in headless Chromium
// at one and two threads) loads, agrees with ours and is timed, and the report and its JSON hold
// every field with finite numbers. No timing is asserted. The GPT-2 row also runs where our
// loader does not take GPT-2 yet: then ours reports the loader's message and the targets say so.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { benchShape, parseArgs } from '../../scripts/bench/models.mjs';
import { formatModels, judgeModels } from '../../scripts/bench/models-report.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const finite = (x, what) => assert.ok(Number.isFinite(x) && x >= 0, `${what} is ${x}`);

describe('bench:models smoke test (tiny shapes)', async () => {
  // Inside the repository: the page is served from its root.
  const dir = await mkdtemp(path.join(ROOT, '.build', 'bench-models-smoke-'));
  after(() => rm(dir, { recursive: true, force: true }));
  const options = { ...parseArgs(['--runs', '1', '--lengths', '16,40', '--new-tokens', '6', '--prefill-tokens', '24',
    '--generate-runs', '1', '--bandwidth-mib', '8']), promptTokens: 8, dir };
  const shapes = [];

  for (const name of ['tiny-llama', 'tiny-gpt2'])
    it(`${name}: Node (one and two threads) and Chromium, every field measured`, async () => {
      const r = await benchShape(name, options);
      shapes.push(r);
      assert.deepEqual(r.node.map((n) => n.threads), [1, 2]);
      const oursLoads = !r.node[0].ours.F32.error;
      if (name === 'tiny-llama') assert.ok(oursLoads, r.node[0].ours.F32.error);
      for (const n of r.node) {
        finite(n.ort.createMs, 'ort.createMs');
        finite(n.ort.rssAddedBytes + 2 ** 40, 'ort.rssAddedBytes');  // may be negative after a GC
        assert.deepEqual(n.forward.map((f) => f.tokens), [16, 40]);
        for (const f of n.forward) {
          finite(f.ortMs, 'ortMs');
          if (oursLoads) finite(f.oursMs, 'oursMs');
        }
        // Every process loads both files, ours on as many threads as onnxruntime-web there.
        if (oursLoads) assert.equal(n.ours.threads, n.threads);
        for (const dtype of ['F32', 'F16']) {
          const o = n.ours[dtype];
          if (!oursLoads) {
            assert.match(o.error, /config\.json|loadModel/);
            continue;
          }
          finite(o.loadMs, 'loadMs');
          assert.ok(o.heapBytes >= o.heapInUse && o.heapInUse > o.fileBytes / 4, JSON.stringify(o));
        }
        if (oursLoads) assert.ok(n.agreement.ok, JSON.stringify(n.agreement));
      }
      for (const n of r.node) {
        for (const side of ['start', 'end']) finite(n.bandwidth[side].gbs, `bandwidth.${side}`);
        if (oursLoads)
          for (const dtype of ['F32', 'F16']) {
            const g = n.generate[dtype];
            assert.equal(g.tokens, 6);
            finite(g.decodeTokensPerSecond, 'decode');
            finite(g.prefill.tokensPerSecond, 'prefill');
          }
      }
      const b = r.browser;
      assert.equal(b.crossOriginIsolated, true);
      for (const dtype of ['F32', 'F16']) {
        assert.deepEqual(b.wllama[dtype].map((w) => [w.threads, w.error]), [[1, undefined], [2, undefined]]);
        for (const w of b.wllama[dtype]) {
          finite(w.loadMs, 'wllama.loadMs');
          finite(w.decodeTokensPerSecond, 'wllama decode');
          finite(w.prefillTokensPerSecond, 'wllama prefill');
          assert.equal(w.agreement.samePrompt, true, JSON.stringify(w.agreement));
          assert.equal(w.multithread, w.threads > 1);
          if (oursLoads) {
            // Compared with ours on as many threads, measured in the same page.
            assert.equal(w.ours.threads, w.threads);
            finite(w.ours.greedy.decodeTokensPerSecond, 'ours decode at wllama threads');
            // The same greedy ids as ours, and the top-3 probabilities within F16-KV-cache rounding.
            assert.equal(w.agreement.sameIds, true, JSON.stringify(w.agreement));
            assert.ok(w.agreement.topProbabilityMaxAbs < 2e-3, JSON.stringify(w.agreement));
          }
        }
        if (oursLoads) {
          finite(b.ours[dtype].greedy.decodeTokensPerSecond, 'chromium decode');
          finite(b.ours[dtype].prefill.tokensPerSecond, 'chromium prefill');
          if (dtype === 'F16') finite(b.ours.F16.headsGrid.medianMs, 'heads grid redraw');
        } else assert.match(b.ours[dtype].error, /config\.json|loadModel/);
      }
      const json = JSON.parse(JSON.stringify(r));  // what --json writes
      assert.equal(json.shape.name, name);
      finite(json.shape.weightBytesPerToken.F16, 'weightBytesPerToken');
    });

  it('the report: a table per shape and every target judged, met, missed or with its reason', () => {
    assert.equal(shapes.length, 2);
    const targets = judgeModels(shapes);
    const ids = new Set(targets.map((t) => `${t.shape}:${t.id}`));
    for (const shape of ['tiny-llama', 'tiny-gpt2'])
      for (const id of ['forward-16-1t', 'forward-40-2t', 'load', 'heap-F16', 'heap-vs-ort', 'decode-bound-F32-node-1t', 'decode-bound-F16-node-2t',
        'decode-bound-F16-chromium', 'decode-wllama-F16-2t', 'prefill-wllama-F32-1t', 'heads-grid'])
        assert.ok(ids.has(`${shape}:${id}`), `${shape}:${id}`);
    for (const t of targets) {
      if (t.met === null) assert.ok(t.reason, JSON.stringify(t));
      else finite(t.ratio, t.id);
      if (t.shape === 'tiny-llama') assert.notEqual(t.met, null, JSON.stringify(t));
    }
    const text = formatModels(shapes, targets, { node: '20', cpu: 'test', cores: 2, loadAverage: { start: [1], end: [1] } });
    assert.match(text, /### tiny-llama: a tiny Llama/);
    assert.match(text, /\| tiny-gpt2 \| forward pass with every layer's attention, 16 tokens/);
    assert.doesNotMatch(text, /NaN|undefined/);
  });
});
