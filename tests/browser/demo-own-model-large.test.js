// The demo's "Your own model" with a GPT-2-small-sized folder: 124M parameters (12 layers, 12
// heads, width 768, 1,024 positions, GPT-2's 50,257-token vocabulary), random F16 weights
// (~274 MB with the attn.bias buffers the Hub's file stores), written once into a temporary
// folder and given through the page's folder input. It loads and draws: the heads grid holds the
// 12 × 12 heads of m.run's attention (the same model in Node), the heatmap shows one of them and
// the generation figure writes. One test: it reads a quarter of a gigabyte twice.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { tokenLabel } from '../../web/elements/lib/tokens.js';
import { assertClose } from './elements/helpers.js';
import { gpt2Checkpoint, writeModelFolder } from '../js/hf-checkpoints.js';
import { startBrowser } from './support.js';

const TEXT = 'The cat sat on the mat because it was tired.';
// Chromium runs the relaxed-SIMD build (fused multiply-add). Through 12 layers of random width-768
// weights the roundings of SIMD128 and relaxed SIMD part by up to 1.5e-4 (seen), so the page is
// held against the same model on the same build: Node with relaxed SIMD, in a child process.
const ENGINES = 1e-5;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** m.run(text) of the folder on the relaxed-SIMD build: { build, tokens, layers: number[][] }. */
async function relaxedRun(dir, text) {
  const script = `import { init } from 'attnlens';
const lens = await init();
const lm = await lens.loadModel(${JSON.stringify(dir)});
const r = lm.run(${JSON.stringify(text)});
process.stdout.write(JSON.stringify({ build: lens.build, tokens: r.tokens, layers: r.layers.map((l) => Array.from(l.attention)) }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', script],
    { cwd: ROOT, maxBuffer: 64 << 20 });
  return JSON.parse(stdout);
}

describe('demo: your own model, GPT-2 small sized (124M parameters, F16)', () => {
  let browser, dir;
  before(async () => {
    browser = await startBrowser();
    dir = writeModelFolder(gpt2Checkpoint({ dim: 768, layers: 12, heads: 12, positions: 1024, lazy: true }), { dtype: 'F16', tokenizer: 'gpt2' });
  });
  after(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('loads through the folder input and draws the heads, the heatmap and the generation', { timeout: 900_000 }, async () => {
    const page = await browser.newPage();
    const foreign = [];
    const origin = new URL(browser.url).origin;
    await page.route('**/*', (route) => {
      const request = route.request(), url = new URL(request.url());
      if (url.protocol === 'data:' || url.protocol === 'blob:' || (url.origin === origin && request.method() === 'GET')) return route.fallback();
      foreign.push(`${request.method()} ${url.href}`);
      return route.abort();
    });
    await page.goto(`${browser.url}/demo/`);
    await page.waitForFunction(() => /Engine:/.test(document.getElementById('engine').textContent));
    // The progress bar moves while the quarter gigabyte is read.
    await page.evaluate(() => {
      window.progressSeen = [];
      new MutationObserver(() => window.progressSeen.push(document.getElementById('own-progress').value))
        .observe(document.getElementById('own-progress'), { attributes: true });
      const bar = document.getElementById('own-progress');
      const timer = setInterval(() => { if (!bar.hidden) window.progressSeen.push(bar.value); }, 20);
      window.stopWatching = () => clearInterval(timer);
    });
    const started = Date.now();
    await page.getByLabel('Choose a model folder').setInputFiles(dir);
    await page.waitForFunction(() => !document.getElementById('own-error').hidden
      || /Opened/.test(document.getElementById('own-status').textContent), null, { timeout: 0 });
    const loadMs = Date.now() - started;
    assert.equal(await page.locator('#own-error').isHidden(), true, await page.textContent('#own-error'));
    assert.match(await page.textContent('#own-status'), /GPT2LMHeadModel, a causal language model with 12 layers × 12 heads and 50,257 tokens/);
    const seen = await page.evaluate(() => (window.stopWatching(), window.progressSeen));
    assert.ok(seen.some((v) => v > 0 && v < 1), `the progress bar showed partial progress (${seen.length} readings)`);
    const got = await page.evaluate(async () => {
      const heads = document.getElementById('own-heads'), heatmap = document.getElementById('own-heatmap');
      await heads.updateComplete;
      await heatmap.updateComplete;
      const generate = document.getElementById('own-generate');
      await generate.updateComplete;
      return {
        tokens: [...heads.tokens], layers: heads.layers, heads: heads.heads, error: heads.error,
        weights: heads.result.weights.map((w) => [...w]),
        heatmap: { layer: heatmap.layer, head: heatmap.head, weights: [...heatmap.weights] },
        generation: { steps: generate.generation?.steps.length, error: generate.error },
      };
    });
    const drawMs = Date.now() - started - loadMs;
    const run = await relaxedRun(dir, TEXT);
    assert.equal(run.build, 'relaxed');
    const n = run.tokens.length;
    assert.equal(got.error, null);
    assert.deepEqual([got.layers, got.heads], [12, 12]);
    assert.deepEqual(got.tokens, run.tokens.map(tokenLabel));
    got.weights.forEach((w, l) => assertClose(w, run.layers[l], ENGINES, `layer ${l} (Chromium vs Node, relaxed SIMD)`));
    const { layer, head, weights } = got.heatmap;
    assertClose(weights, run.layers[layer].slice(head * n * n, (head + 1) * n * n), ENGINES, 'heatmap');
    assert.equal(got.generation.error, null);
    assert.ok(got.generation.steps >= 1 && got.generation.steps <= 16, `${got.generation.steps} steps written`);
    assert.deepEqual(foreign, []);
    assert.deepEqual(browser.offHost, []);
    assert.deepEqual(page.problems ?? [], []);
    console.log(`# 124M-parameter folder: opened in ${loadMs} ms, figures and 16 generated tokens in ${drawMs} ms`);
  });
});
