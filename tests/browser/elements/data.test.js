// Where figures get their data from, and what they do with bad or hostile data.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { requireDependency, startBrowser } from '../support.js';
import { assertClean, assertClose, parseSVG, ref, setData, vectors } from './helpers.js';

const TOKENS = ['a', 'b', 'c'];
const data = vectors(TOKENS, { dK: 2, seed: 9, spread: 2 });
const want = Array.from(ref.attention(data.q, data.k, data.v, { dK: 2 }).weights);
const json = JSON.stringify(data.json);
const precomputed = { tokens: TOKENS, attention: [[[[0.5, 0.25, 0.25], [0, 1, 0], [0.2, 0.3, 0.5]]]] };

const weightsOf = (page, id) => page.evaluate(async (id) => {
  const el = document.getElementById(id);
  await customElements.whenDefined(el.localName);
  const ok = await el.updateComplete;
  return { ok, error: el.error, weights: el.weights && Array.from(el.weights), tokens: el.tokens };
}, id);

describe('figure data sources', () => {
  let browser;
  before(async () => { browser = await startBrowser(); });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('reads attributes, a child JSON script, a shared #id script and a same-site src', async () => {
    const page = await browser.fixture(`
      <attn-heatmap id="attrs" tokens="a b c" q='${JSON.stringify(data.json.Q)}' k='${JSON.stringify(data.json.K)}'></attn-heatmap>
      <attn-heatmap id="child"><script type="application/json">${json}</script></attn-heatmap>
      <attn-bars id="shared1" src="#shared"></attn-bars>
      <attn-heatmap id="shared2" src="#shared"></attn-heatmap>
      <script type="application/json" id="shared">${json}</script>
      <attn-heatmap id="fetched" src="run.json"></attn-heatmap>`, { files: { 'run.json': precomputed } });
    for (const id of ['attrs', 'child', 'shared1', 'shared2']) {
      const r = await weightsOf(page, id);
      assert.equal(r.ok, true, `${id}: ${r.error}`);
      assert.deepEqual(r.tokens, TOKENS);
      assertClose(r.weights, want, 1e-5, id);
    }
    const fetched = await weightsOf(page, 'fetched');
    assert.equal(fetched.ok, true, fetched.error);
    assertClose(fetched.weights, precomputed.attention[0][0].flat(), 1e-7, 'precomputed via src');
    assertClean(page, browser);
  });

  it('refuses a src on another site without requesting it', async () => {
    const page = await browser.fixture('<attn-heatmap id="far" src="http://example.invalid/run.json"></attn-heatmap>');
    const r = await weightsOf(page, 'far');
    assert.equal(r.ok, false);
    assert.match(r.error, /same site/);
    assertClean(page, browser);
  });

  it('model="use-lite" text="…" shows the model add-on\'s attention, as lens.loadModel() gives it', async () => {
    const text = 'The cat sat on the mat.';
    const page = await browser.fixture(`<attn-heads id="m" model="use-lite" text="${text}"></attn-heads>`);
    const r = await weightsOf(page, 'm');
    const direct = await page.evaluate(async (text) => {
      const lens = await (await import('/attnlens.js')).init();
      try {
        const run = (await lens.loadModel()).run(text);
        return { tokens: run.tokens, layers: run.layers.map((l) => ({ heads: l.heads, attention: Array.from(l.attention) })) };
      } catch (error) {
        return { failed: `${error.name}: ${error.message}` };
      }
    }, text);
    // scripts/build.sh builds the add-on and its USE-lite weights (web/dist/use-lite.bin).
    requireDependency('the model add-on (USE-lite)', !direct.failed, `scripts/build.sh builds it; lens.loadModel() threw ${direct.failed}`);
    assert.equal(r.ok, true, r.error);
    assert.deepEqual(r.tokens, direct.tokens.map((t) => (t.length > 1 && t.startsWith('▁') ? t.slice(1) : t)));
    const shape = await page.evaluate(() => { const el = document.getElementById('m'); return [el.layers, el.heads]; });
    assert.deepEqual(shape, [direct.layers.length, direct.layers[0].heads]);
    const n = direct.tokens.length;
    assertClose(r.weights, direct.layers[0].attention.slice(0, n * n), 0, 'layer 1, head 1');
    await page.evaluate(async () => { const el = document.getElementById('m'); el.layer = 1; el.head = 2; await el.updateComplete; });
    const chosen = await weightsOf(page, 'm');
    assertClose(chosen.weights, direct.layers[1].attention.slice(2 * n * n, 3 * n * n), 0, 'layer 2, head 3');
  });

  it('precomputed weights: temperature re-weights w^(1/T), masks renormalise', async () => {
    const page = await browser.fixture('<attn-heatmap id="p" mask="causal" temperature="2"></attn-heatmap>');
    assert.equal(await setData(page, 'p', precomputed), true);
    const r = await weightsOf(page, 'p');
    const rows = precomputed.attention[0][0];
    const expected = rows.flatMap((row, i) => {
      const kept = row.map((w, j) => (j > i ? 0 : Math.sqrt(w)));
      const sum = kept.reduce((a, b) => a + b);
      return kept.map((w) => w / sum);
    });
    assertClose(r.weights, expected, 1e-6, 'T = 2, causal');
  });

  it('changing the child JSON redraws', async () => {
    const page = await browser.fixture(`<attn-heatmap id="live"><script type="application/json">${JSON.stringify(precomputed)}</script></attn-heatmap>`);
    assert.equal((await weightsOf(page, 'live')).ok, true);
    await page.evaluate(() => {
      document.querySelector('#live script').textContent = JSON.stringify({ tokens: ['x', 'y'], attention: [[1, 0], [0, 1]] });
    });
    await page.waitForFunction(() => document.getElementById('live').tokens?.length === 2);
    assert.deepEqual((await weightsOf(page, 'live')).weights, [1, 0, 0, 1]);
  });
});

describe('bad and hostile data', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-bars id="bars"></attn-bars><attn-heatmap id="map"></attn-heatmap><attn-pipeline id="pipe"></attn-pipeline><attn-heads id="heads"></attn-heads>');
    await page.evaluate(() => {
      window.__errors = [];
      for (const el of document.querySelectorAll('attn-bars, attn-heatmap, attn-pipeline, attn-heads'))
        el.addEventListener('error', (e) => window.__errors.push(`${el.id}: ${e.detail.message}`));
    });
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  const cases = [
    ['wrong row count', { tokens: ['a', 'b', 'c'], Q: [[1, 2], [3, 4]], K: [[1, 2], [3, 4], [5, 6]] }, /Q has 2 rows but there are 3 tokens/],
    ['ragged rows', { tokens: ['a', 'b'], Q: [[1, 2], [3]], K: [[1, 2], [3, 4]] }, /Q\[1\] has 1 entries but Q\[0\] has 2/],
    ['a string among numbers', { tokens: ['a', 'b'], Q: [[1, 2], [3, '4']], K: [[1, 2], [3, 4]] }, /Q\[1\]\[1\] must be a finite number \(got the text "4"\)/],
    ['null as a number', { tokens: ['a', 'b'], Q: [[1, 2], [3, 4]], K: [[1, null], [3, 4]] }, /K\[0\]\[1\] must be a finite number \(got null\)/],
    ['K narrower than Q', { tokens: ['a', 'b'], Q: [[1, 2], [3, 4]], K: [[1], [3]] }, /K rows have 1 numbers; heads·width is 1·2 = 2/],
    ['heads not dividing', { tokens: ['a', 'b'], heads: 3, Q: [[1, 2], [3, 4]], K: [[1, 2], [3, 4]] }, /not a multiple of heads \(3\)/],
    ['weights above 1', { tokens: ['a', 'b'], attention: [[0.5, 0.5], [2, 0]] }, /attention\[1\]\[0\] is 2: weights lie between 0 and 1/],
    ['attention of the wrong size', { tokens: ['a', 'b', 'c'], attention: [[1, 0], [0, 1]] }, /2×2 but there are 3 tokens/],
    ['no tokens', { Q: [[1]], K: [[1]] }, /tokens must be a list of words \(got missing\)/],
    ['an object token', { tokens: ['a', { html: '<b>' }], Q: [[1], [2]], K: [[1], [2]] }, /tokens\[1\] must be text/],
    ['nothing to compute', { tokens: ['a'] }, /needs Q, K and V/],
    ['not an object', [1, 2, 3], /data must be an object/],
    ['W missing', { tokens: ['a'], X: [[1, 2]], W_Q: [[1, 0], [0, 1]] }, /W_K is missing/],
  ];
  for (const [what, bad, message] of cases)
    it(`shows an error for ${what}`, async () => {
      for (const id of ['bars', 'map', 'heads']) {
        const ok = await setData(page, id, bad);
        assert.equal(ok, false, id);
        const shown = await page.locator(`#${id}`).locator('[role="alert"]').first().textContent();
        assert.match(shown, message, `${id}: ${shown}`);
        assert.equal(await page.locator(`#${id}`).locator('.body').first().isVisible(), false);
      }
      assert.ok((await page.evaluate(() => window.__errors.splice(0))).length >= 3, 'error events');
    });

  it('10 000 tokens is refused with a readable message', async () => {
    const tokens = Array.from({ length: 10000 }, (_, i) => `t${i}`);
    for (const id of ['bars', 'map', 'pipe', 'heads']) {
      assert.equal(await setData(page, id, { tokens, Q: [[1]], K: [[1]] }), false);
      assert.match(await page.locator(`#${id}`).locator('[role="alert"]').first().textContent(), /10000 tokens is more than this figure can show/);
    }
  });

  it('renders HTML in tokens as text and runs nothing from data', async () => {
    const evil = ['<img src=x onerror="window.__pwned=1">', '<script>window.__pwned=2</script>', '"><svg onload=window.__pwned=3>', '&amp;'];
    const d = vectors(evil, { dK: 2, seed: 4 });
    for (const id of ['bars', 'map', 'pipe', 'heads']) assert.equal(await setData(page, id, d.json), true, id);
    await page.evaluate(() => document.getElementById('map').query = 0);
    const found = await page.evaluate(() => {
      const all = [...document.querySelectorAll('attn-bars, attn-heatmap, attn-pipeline, attn-heads')];
      const deep = (root) => [...root.querySelectorAll('*')].flatMap((e) => [e, ...(e.shadowRoot ? deep(e.shadowRoot) : [])]);
      const nodes = all.flatMap((el) => deep(el.shadowRoot));
      return {
        pwned: window.__pwned ?? null,
        injected: nodes.filter((e) => ['img', 'script', 'svg', 'iframe'].includes(e.localName)).length,
        text: all.map((el) => el.shadowRoot.textContent).join(' '),
      };
    });
    assert.equal(found.pwned, null);
    assert.equal(found.injected, 0);
    assert.ok(found.text.includes('<img src=x onerror="window.__pwned=1">'), 'the token is shown as text');
    for (const id of ['bars', 'map', 'pipe', 'heads']) {
      const svg = await page.evaluate((id) => document.getElementById(id).toSVG(), id);
      const parsed = await parseSVG(page, svg);
      assert.equal(parsed.ok, true, `${id}: ${parsed.error}`);
      assert.equal(parsed.scripts, 0);
      assert.ok(!/<img|<script|<svg onload/i.test(svg.replace(/^<\?xml[^>]*>\s*<svg /, '')), `${id}: no markup from tokens`);
      assert.ok((parsed.texts.join(' ') + parsed.title).includes(evil[0].slice(0, 12)), `${id}: token text kept`);
    }
    assert.equal(await page.evaluate(() => window.__pwned ?? null), null);
  });

  it('invalid state values throw from properties and leave the state alone', async () => {
    const r = await page.evaluate(() => {
      const el = document.getElementById('bars');
      const out = [];
      for (const [name, value] of [['temperature', 0], ['scale', -1], ['mask', 'sideways'], ['layer', 1.5], ['step', 'boil']])
        try { el[name] = value; out.push(`${name}: accepted`); } catch (e) { out.push(`${e.name}: ${e.message}`); }
      return { out, temperature: el.temperature, scale: el.scale, mask: el.mask };
    });
    assert.ok(r.out.every((m) => m.startsWith('RangeError')), r.out.join('\n'));
    assert.deepEqual([r.temperature, r.scale, r.mask], [1, 'auto', 'none']);
    assertClean(page, browser);
  });
});
