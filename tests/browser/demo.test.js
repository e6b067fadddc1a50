import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { assertClose, readHeatmap } from './elements/helpers.js';
import * as ref from '../js/reference.js';
import { startBrowser } from './support.js';

const SENTENCE = ['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.'];
const FIGURES = ['bars', 'pipeline', 'heatmap', 'mask-heatmap', 'heads', 'play-bars', 'play-heatmap', 'play-pipeline',
  'generate', 'generate-heads'];
const MODEL_SENTENCE = 'The cat sat on the mat because it was tired.';

// The same model run by the same engine in Node: the browser must load the same weights and agree.
let nodeModel;
async function modelInNode() {
  if (!nodeModel) {
    const { init } = await import('attnlens');
    nodeModel = await (await init()).loadModel();
  }
  return nodeModel;
}

async function openDemo(browser) {
  const page = await browser.newPage();
  await page.goto(`${browser.url}/demo/`);
  const errors = await page.evaluate(async (ids) => {
    await Promise.all(ids.map((id) => customElements.whenDefined(document.getElementById(id).localName)));
    const out = [];
    for (const id of ids) if (!(await document.getElementById(id).updateComplete)) out.push(`${id}: ${document.getElementById(id).error}`);
    return out;
  }, FIGURES);
  assert.deepEqual(errors, [], 'every figure of the demo page draws');
  return page;
}

// The hand-made vectors as the page gives them (its JSON block), flattened for the reference.
const sentenceData = (page) => page.evaluate(() => JSON.parse(document.getElementById('sentence').textContent));
const flat = (m) => Float32Array.from(m.flat());

describe('demo page in headless Chromium', () => {
  let browser;
  before(async () => { browser = await startBrowser(); });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('runs the SIMD module and the heatmap draws the weights it computed', async () => {
    const page = await openDemo(browser);
    const engine = await page.evaluate(() => {
      const { simd, arch, build } = document.getElementById('mask-heatmap').lens;
      return { simd, arch, build };
    });
    // Chromium validates relaxed SIMD: init() picks the fused multiply-add build.
    assert.deepEqual(engine, { simd: true, arch: 'wasm_relaxed', build: 'relaxed' });
    const data = await sentenceData(page);
    assert.deepEqual(data.tokens, SENTENCE);
    const want = ref.attention(flat(data.Q), flat(data.K), flat(data.V), { dK: 4 }).weights;
    const engineWeights = await page.evaluate(() => Array.from(document.getElementById('mask-heatmap').weights));
    assert.ok(ref.maxAbsDiff(engineWeights, want) <= 1e-5);
    // What is on the canvas, read back pixel by pixel, is those weights.
    const drawn = await readHeatmap(page, 'mask-heatmap');
    assert.equal(drawn.n, SENTENCE.length);
    assertClose(drawn.values, Array.from(want), 1.5 / 255 / 0.7, 'drawn cells');
    assert.deepEqual(page.problems, []);
    assert.deepEqual(browser.offHost, []);
  });

  it('figure 1: the real model\'s "it" looks mostly at "cat" (layer 2, head 2), and the page says so', async () => {
    const page = await openDemo(browser);
    const bars = await page.evaluate(() => {
      const el = document.getElementById('bars');
      return { query: el.query, layer: el.layer, head: el.head, tokens: [...el.tokens], row: [...el.row] };
    });
    const model = await modelInNode();
    const run = model.run(MODEL_SENTENCE);
    const n = run.tokens.length;
    assert.deepEqual(bars.tokens, run.tokens.map((t) => t.replace(/^▁/, '')));
    assert.equal(bars.tokens[bars.query], 'it');
    const want = run.layers[bars.layer].attention.subarray((bars.head * n + bars.query) * n, (bars.head * n + bars.query + 1) * n);
    assertClose(bars.row, Array.from(want), 1e-5, 'row of "it" (Chromium vs Node)');
    assert.equal(bars.tokens[bars.row.indexOf(Math.max(...bars.row))], 'cat');
    // Honest labels: the model figures name the model, the others say they are not from one.
    const main = await page.locator('main').textContent();
    assert.match(main, /Figures 1, 3 and 4 show\s+real\s+attention from a\s+trained model/);
    for (const id of ['h-bars', 'h-heatmap', 'h-heads'])
      assert.match(await page.locator(`section[aria-labelledby="${id}"] > p.note`).first().textContent(), /Universal Sentence Encoder lite/);
    for (const id of ['h-pipeline', 'h-heatmap'])
      assert.match(await page.locator(`section[aria-labelledby="${id}"] > p.note`).last().textContent(), /Not from a model/);
    assert.match(await page.textContent('#model-status'), /Model ready/);
    assert.deepEqual(page.problems, []);
  });

  it('the model figures follow the sentence the reader types', async () => {
    const page = await openDemo(browser);
    const text = 'Dogs chase cats.';
    const run = (await modelInNode()).run(text);
    const tokens = run.tokens.map((t) => t.replace(/^▁/, ''));
    await page.fill('#model-text', text);
    await page.waitForFunction((want) => ['bars', 'heatmap', 'heads']
      .every((id) => document.getElementById(id).tokens?.join('|') === want), tokens.join('|'));
    const shown = await page.evaluate(async () => {
      const out = {};
      for (const id of ['bars', 'heatmap', 'heads']) {
        const el = document.getElementById(id);
        await el.updateComplete;
        out[id] = { tokens: [...el.tokens], layers: el.layers, heads: el.heads };
      }
      out.weights = [...document.getElementById('heatmap').weights];
      out.layer = document.getElementById('heatmap').layer;
      out.head = document.getElementById('heatmap').head;
      return out;
    });
    for (const id of ['bars', 'heatmap', 'heads']) assert.deepEqual(shown[id].tokens, tokens, id);
    assert.equal(shown.heads.layers, 2);
    assert.equal(shown.heads.heads, 4);
    const n = tokens.length;
    const want = run.layers[shown.layer].attention.subarray(shown.head * n * n, (shown.head + 1) * n * n);
    assertClose(shown.weights, Array.from(want), 1e-5, 'heatmap of the typed sentence');
    assert.deepEqual(page.problems, []);
  });

  it('the heatmap mask buttons and the d_k control drive the figures', async () => {
    const page = await openDemo(browser);
    await page.click('button[data-mask="causal"]');
    await page.evaluate(() => document.getElementById('mask-heatmap').updateComplete);
    assert.equal(await page.evaluate(() => document.getElementById('mask-heatmap').isMasked(0, 5)), true);
    assert.equal(await page.getAttribute('button[data-mask="causal"]', 'aria-pressed'), 'true');
    await page.selectOption('#dk', '256');
    await page.evaluate(() => document.getElementById('pipeline').updateComplete);
    assert.equal(await page.evaluate(() => document.getElementById('pipeline').result.dK), 256);
    assert.deepEqual(page.problems, []);
  });

  it('the playground redraws from typed tokens and edited JSON, and shows bad input as an error', async () => {
    const page = await openDemo(browser);
    await page.fill('#play-tokens', 'attention is all you need today');
    await page.waitForFunction(() => document.getElementById('play-heatmap').tokens?.length === 6);
    const weights = await page.evaluate(async () => {
      await document.getElementById('play-heatmap').updateComplete;
      return [...document.getElementById('play-heatmap').weights];
    });
    assert.equal(weights.length, 36);
    for (let i = 0; i < 6; i++) assert.ok(Math.abs(weights.slice(i * 6, i * 6 + 6).reduce((a, b) => a + b) - 1) < 1e-5);
    // The JSON box is what the figures show.
    const json = JSON.parse(await page.inputValue('#play-json'));
    const want = ref.attention(flat(json.Q), flat(json.K), flat(json.V), { dK: json.Q[0].length }).weights;
    assertClose(weights, Array.from(want), 1e-5, 'playground weights');
    await page.fill('#play-json', '{"tokens": ["a", "b"], "Q": [[1, 2]], "K": [[1, 2], [3, 4]]}');
    await page.waitForFunction(() => document.getElementById('play-bars').error !== null);
    assert.match(await page.locator('#play-bars').locator('[role="alert"]').textContent(), /Q has 1 rows but there are 2 tokens/);
    await page.fill('#play-json', '{"tokens": [');
    assert.match(await page.textContent('#play-status'), /does not parse/);
    assert.deepEqual(page.problems, []);
  });

  it('draws 2048 random tokens on demand', async () => {
    const page = await openDemo(browser);
    await page.click('#big');
    await page.waitForFunction(() => document.getElementById('big-heatmap').tokens?.length === 2048);
    assert.match(await page.textContent('#big-note'), /2048 × 2048/);
    assert.deepEqual(page.problems, []);
  });

  it('figure 7: stories260K writes what it writes in Node, is labelled honestly, and a new seed writes another story', async () => {
    const page = await openDemo(browser);
    const { init } = await import('attnlens');
    const lm = await (await init()).loadModel('stories260K');
    const read = () => page.evaluate(() => {
      const el = document.getElementById('generate');
      return { prompt: el.prompt, steps: el.steps, temperature: el.temperature, topP: el.topP, seed: el.seed, text: el.generation.text };
    });
    const shown = await read();
    const want = lm.generate(shown.prompt, { steps: shown.steps, temperature: shown.temperature, topP: shown.topP, seed: shown.seed });
    assert.equal(shown.text, want.text);
    const section = await page.locator('section[aria-labelledby="h-writes"]').textContent();
    assert.match(section, /260,000 parameters/);
    assert.match(section, /TinyStories/);
    assert.match(section, /knows little\s+else/);
    assert.match(section, /attention\s+is real/);
    await page.click('#generate-seed');
    await page.evaluate(() => document.getElementById('generate').updateComplete);
    const next = await read();
    assert.equal(next.seed, shown.seed + 1);
    assert.equal(next.text, lm.generate(shown.prompt, { steps: shown.steps, temperature: shown.temperature, topP: shown.topP, seed: next.seed }).text);
    assert.notEqual(next.text, shown.text);
    assert.match(await page.textContent('#generate-note'), new RegExp(`Seed ${next.seed}`));
    const heads = await page.evaluate(() => { const el = document.getElementById('generate-heads'); return [el.layers, el.heads, el.tokens[0]]; });
    assert.deepEqual(heads, [5, 8, '<s>']);
    assert.deepEqual(page.problems, []);
  });

  it('fits a 360 px wide screen in the dark theme', async () => {
    const page = await openDemo(browser);
    await page.setViewportSize({ width: 360, height: 740 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.evaluate(async (ids) => { for (const id of ids) await document.getElementById(id).updateComplete; }, FIGURES);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(overflow, 0);
    const widths = await page.evaluate((ids) => ids.map((id) => document.getElementById(id).getBoundingClientRect().right), FIGURES);
    for (const right of widths) assert.ok(right <= 360, `a figure ends at ${right}px`);
    const bg = await page.evaluate(() => getComputedStyle(document.getElementById('heatmap')).getPropertyValue('--attn-bg').trim());
    assert.equal(bg, '#16181c');
    assert.deepEqual(page.problems, []);
    assert.deepEqual(browser.offHost, []);
  });
});
