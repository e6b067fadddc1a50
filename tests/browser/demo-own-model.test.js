// The demo's "Your own model" section end to end in headless Chromium: a small GPT-2 folder and a
// small BERT folder (random weights in the Hub's layout, the real vocabularies), written here and
// given through the page's file inputs, as a reader would. The drawn figures hold the weights of
// the model's own m.run() in Node and of the float64 reference; the fill-mask bars are m.fillMask;
// the generation is m.generate; a bad folder shows its ModelFormatError as text and the page
// stays usable. Every request but the page's own (same-origin GET) files is refused and recorded.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';

import { init } from 'attnlens';

import { tokenLabel } from '../../web/elements/lib/tokens.js';
import { assertClose, readHeatmap } from './elements/helpers.js';
import { bertCheckpoint, gpt2Checkpoint, roundedTensors, writeModelFolder } from '../js/hf-checkpoints.js';
import { maxAbsDiff, reference } from '../js/transformer-reference.js';
import { startBrowser } from './support.js';

const TEXT = 'The cat sat on the mat because it was tired.';
const MASKED = 'The cat sat on the [MASK] because it was tired.';
// Chromium runs the relaxed-SIMD build, Node the SIMD128 one: the same sums in another order.
const ENGINES = 1e-5;
const REFERENCE = 1e-4;  // the model tests' attention tolerance against float64

const folders = [];
const folder = (ckpt, options) => {
  const dir = writeModelFolder(ckpt, options);
  folders.push(dir);
  return dir;
};
const files = (dir, names) => names.map((n) => path.join(dir, n));
const HF_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];

/** The demo with a guard: every request must be a same-origin GET of the page's own files. */
async function openDemo(browser) {
  const page = await browser.newPage();
  page.foreign = [];
  const origin = new URL(browser.url).origin;
  await page.route('**/*', (route) => {
    const request = route.request(), url = new URL(request.url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || (url.origin === origin && request.method() === 'GET')) return route.fallback();
    page.foreign.push(`${request.method()} ${url.href}`);
    return route.abort();
  });
  await page.goto(`${browser.url}/demo/`);
  await page.waitForFunction(() => /Engine:/.test(document.getElementById('engine').textContent));
  return page;
}

// axe-core (WCAG 2.1 A and AA) over the section, sent same-origin as the page's own file.
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
async function axeViolations(page, origin) {
  await page.route(`${origin}/__axe__.js`, (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: AXE }));
  return page.evaluate(async () => {
    if (!window.axe) {
      const script = Object.assign(document.createElement('script'), { src: '/__axe__.js' });
      await new Promise((resolve, reject) => { script.onload = resolve; script.onerror = reject; document.head.append(script); });
    }
    const { violations } = await window.axe.run({ include: ['#own-model'] },
      { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
    return violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  });
}

/** Waits for the section to open a model (or show an error); returns the status and error text. */
async function opened(page) {
  await page.waitForFunction(() => !document.getElementById('own-error').hidden || !document.getElementById('own-figures').hidden
    && /Opened/.test(document.getElementById('own-status').textContent));
  return page.evaluate(async () => {
    for (const id of ['own-heads', 'own-heatmap', 'own-lines']) await document.getElementById(id).updateComplete;
    const error = document.getElementById('own-error');
    return { status: document.getElementById('own-status').textContent, error: error.hidden ? null : error.textContent };
  });
}

/** What the figures hold: tokens, every layer's weights (heads grid), the heatmap's and lines' head. */
const shown = (page) => page.evaluate(() => {
  const el = (id) => document.getElementById(id);
  const heads = el('own-heads'), heatmap = el('own-heatmap'), lines = el('own-lines');
  return {
    tokens: [...heads.tokens], layers: heads.layers, heads: heads.heads,
    weights: heads.result.weights.map((w) => [...w]),
    heatmap: { tokens: [...heatmap.tokens], layer: heatmap.layer, head: heatmap.head, weights: [...heatmap.weights] },
    lines: { tokens: [...lines.tokens], layer: lines.layer, head: lines.head, weights: [...lines.weights] },
    errors: ['own-heads', 'own-heatmap', 'own-lines'].map((id) => el(id).error).filter(Boolean),
  };
});

// The figures against the Node run (same engine) and the float64 reference (independent).
function checkFigures(got, run, want) {
  assert.deepEqual(got.errors, []);
  assert.deepEqual(got.tokens, run.tokens.map(tokenLabel));
  assert.equal(got.layers, run.layers.length);
  const n = run.tokens.length;
  got.weights.forEach((w, l) => {
    assertClose(w, Array.from(run.layers[l].attention), ENGINES, `layer ${l} (Chromium vs Node)`);
    assert.ok(maxAbsDiff(Float32Array.from(w), want.attention[l]) <= REFERENCE, `layer ${l} against the float64 reference`);
  });
  for (const view of ['heatmap', 'lines']) {
    const { layer, head, weights, tokens } = got[view];
    assert.deepEqual(tokens, got.tokens, view);
    assertClose(weights, Array.from(run.layers[layer].attention.subarray(head * n * n, (head + 1) * n * n)), ENGINES, `${view} L${layer} H${head}`);
  }
}

describe('demo: your own model, in headless Chromium', () => {
  let browser, lens;
  const gpt2 = gpt2Checkpoint({ seed: 21 });
  const bert = bertCheckpoint({ seed: 22 });
  let gpt2Dir, bertDir;
  before(async () => {
    browser = await startBrowser();
    lens = await init();
    gpt2Dir = folder(gpt2, { dtype: 'F16', tokenizer: 'gpt2' });
    bertDir = folder(bert, { dtype: 'F32', tokenizer: 'bert' });
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  it('a GPT-2 folder chosen as a folder: heads, heatmap, lines and the generation are the model\'s own', async () => {
    const page = await openDemo(browser);
    // The reader's way in: the labelled folder input.
    await page.getByLabel('Choose a model folder').setInputFiles(gpt2Dir);
    const { status, error } = await opened(page);
    assert.equal(error, null);
    assert.match(status, /Opened .*GPT2LMHeadModel, a causal language model with 2 layers × 4 heads and 50,257 tokens/);
    const lm = await lens.loadModel(gpt2Dir);
    const run = lm.run(TEXT);
    const want = reference(gpt2.config, roundedTensors(gpt2, 'F16'), run.ids);
    checkFigures(await shown(page), run, want);
    // The heatmap's canvas, read back pixel by pixel, is its head's weights.
    const drawn = await readHeatmap(page, 'own-heatmap');
    const heatmap = (await shown(page)).heatmap;
    assertClose(drawn.values, heatmap.weights, 1.5 / 255 / 0.7, 'drawn cells');
    // Choosing another head in the grid opens it in the heatmap and the lines view.
    await page.locator('#own-heads [role="gridcell"][data-layer="1"][data-head="2"]').click();
    await page.waitForFunction(() => document.getElementById('own-lines').head === 2 && document.getElementById('own-lines').layer === 1);
    checkFigures(await shown(page), run, want);
    // The generation figure writes what m.generate writes, greedily, from the text.
    const generation = await page.evaluate(async () => {
      const el = document.getElementById('own-generate');
      await el.updateComplete;
      return { text: el.generation.text, prompt: el.prompt, error: el.error };
    });
    assert.equal(generation.error, null);
    assert.equal(generation.prompt, TEXT);
    assert.equal(generation.text, lm.generate(TEXT, { steps: 16, temperature: 0 }).text);
    assert.equal(await page.locator('#own-fill').isHidden(), true);
    assert.deepEqual(await axeViolations(page, new URL(browser.url).origin), [], 'axe: the section with a causal LM open');
    // The text box drives the figures.
    const other = 'Dogs chase cats 😀';
    await page.fill('#own-text', other);
    const otherRun = lm.run(other);
    await page.waitForFunction((want) => document.getElementById('own-heads').tokens?.join('|') === want, otherRun.tokens.map(tokenLabel).join('|'));
    checkFigures(await shown(page), otherRun, reference(gpt2.config, roundedTensors(gpt2, 'F16'), otherRun.ids));
    assert.deepEqual(page.foreign, []);
    assert.deepEqual(browser.offHost, []);
    assert.deepEqual(page.problems, []);
  });

  it('a BERT folder chosen as files: the figures and the fill-mask bars are m.run and m.fillMask', async () => {
    const page = await openDemo(browser);
    await page.getByLabel('or choose its files').setInputFiles(files(bertDir, HF_FILES));
    const { status, error } = await opened(page);
    assert.equal(error, null);
    assert.match(status, /BertForMaskedLM, a masked language model with 2 layers × 4 heads/);
    // A masked LM starts from a text with its mask token.
    assert.equal(await page.inputValue('#own-text'), MASKED);
    const lm = await lens.loadModel(bertDir);
    const run = lm.run(MASKED);
    checkFigures(await shown(page), run, reference(bert.config, roundedTensors(bert), run.ids));
    const bars = await page.evaluate(() => [...document.querySelectorAll('#own-fill-bars li')].map((li) =>
      ({ token: li.querySelector('.token').textContent, p: Number(li.dataset.p), value: li.querySelector('.value').textContent })));
    const [{ position, candidates }] = lm.fillMask(MASKED, { top: 8 });
    assert.equal(run.tokens[position], '[MASK]');
    assert.deepEqual(bars.map((b) => b.token), candidates.map((c) => tokenLabel(c.token)));
    assertClose(bars.map((b) => b.p), candidates.map((c) => c.p), ENGINES, 'fill-mask probabilities');
    for (const b of bars) assert.match(b.value, /^\d+\.\d+ %$/);
    assert.match(await page.textContent('#own-fill-note'), /best guesses for token \d+/);
    assert.equal(await page.locator('#own-writes').isHidden(), true);
    assert.deepEqual(await axeViolations(page, new URL(browser.url).origin), [], 'axe: the section with a masked LM open');
    // Without a mask the bars say what is missing; the attention figures still follow.
    await page.fill('#own-text', 'no mask here');
    await page.waitForFunction(() => /Put \[MASK\] in the text/.test(document.getElementById('own-fill-note').textContent));
    assert.equal(await page.locator('#own-fill-bars li').count(), 0);
    assert.deepEqual(page.foreign, []);
    assert.deepEqual(page.problems, []);
  });

  it('a bad folder shows its ModelFormatError as text, and the page opens a good one after it', async () => {
    const page = await openDemo(browser);
    const bad = folder(bert, { tokenizer: 'bert' });
    const config = { ...bert.config, model_type: 't5', architectures: ['T5ForConditionalGeneration'] };
    writeFileSync(path.join(bad, 'config.json'), JSON.stringify(config));
    const message = await lens.loadModel(bad).then(() => null, (e) => `${e.name}: ${e.message}`);
    assert.match(message, /^ModelFormatError: .*t5/);
    await page.getByLabel('or choose its files').setInputFiles(files(bad, HF_FILES));
    const { error } = await opened(page);
    assert.equal(error, `This model could not be opened: ${message.replace(/^ModelFormatError: /, '')}`);
    assert.equal(await page.getAttribute('#own-error', 'role'), 'alert');
    assert.equal(await page.locator('#own-figures').isHidden(), true);
    // A folder without its weights: the loader names what is missing.
    await page.getByLabel('or choose its files').setInputFiles(files(bad, ['config.json', 'tokenizer.json']));
    await page.waitForFunction(() => /safetensors/.test(document.getElementById('own-error').textContent));
    // Still usable: the good folder opens and draws.
    await page.getByLabel('or choose its files').setInputFiles(files(bertDir, HF_FILES));
    await page.waitForFunction(() => document.getElementById('own-error').hidden && !document.getElementById('own-figures').hidden);
    assert.equal((await opened(page)).error, null);
    assert.deepEqual((await shown(page)).errors, []);
    // Tokens are text, never HTML.
    await page.fill('#own-text', '<img src=x onerror=alert(1)> [MASK]');
    await page.waitForFunction(() => document.getElementById('own-heads').tokens?.includes('<'));
    assert.equal(await page.locator('#own-model img').count(), 0);
    assert.deepEqual(page.foreign, []);
    assert.deepEqual(page.problems, []);
  });

  it('a folder dropped on the section opens, and the section fits 360 px in the dark theme', async () => {
    const page = await openDemo(browser);
    await page.setViewportSize({ width: 360, height: 740 });
    await page.emulateMedia({ colorScheme: 'dark' });
    // A drop of files as a script can make one (no directory entries): the dropped files.
    const { readFileSync } = await import('node:fs');
    const payload = HF_FILES.map((n) => ({ name: n, base64: readFileSync(path.join(bertDir, n)).toString('base64') }));
    await page.evaluate((payload) => {
      const transfer = new DataTransfer();
      for (const { name, base64 } of payload)
        transfer.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name));
      document.getElementById('own-drop').dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, payload);
    const { error } = await opened(page);
    assert.equal(error, null);
    await page.evaluate(() => document.getElementById('own-heads').updateComplete);
    // Keyboard: the two file inputs, then the text box, are reached with Tab; each has a label.
    await page.focus('#own-folder');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'own-files');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'own-text');
    for (const label of ['Choose a model folder', 'or choose its files', 'Text for your model'])
      assert.equal(await page.getByLabel(label).count(), 1, label);
    assert.equal(await page.getAttribute('#own-progress', 'aria-label'), 'Reading your model');
    assert.equal(await page.getAttribute('#own-status', 'role'), 'status');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(overflow, 0);
    const rights = await page.evaluate(() => ['own-drop', 'own-heads', 'own-heatmap', 'own-lines', 'own-fill-bars']
      .map((id) => [id, document.getElementById(id).getBoundingClientRect().right]));
    for (const [id, right] of rights) assert.ok(right <= 360, `${id} ends at ${right}px`);
    assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('own-heatmap')).getPropertyValue('--attn-bg').trim()), '#16181c');
    assert.deepEqual(await axeViolations(page, new URL(browser.url).origin), [], 'axe: the section at 360 px, dark');
    assert.deepEqual(page.foreign, []);
    assert.deepEqual(page.problems, []);
  });
});
