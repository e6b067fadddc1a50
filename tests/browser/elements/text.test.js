// <attn-text>: the tints read back (computed background colours → position on the ramp) against
// a float64 mapping of the float64 reference weights, both directions, every colour scale, masks,
// aggregates, vectors / projections / precomputed / the model; the text as text (spaces kept,
// ## joined, HTML shown literally); contrast ≥ 4.5:1 on every tint in light and dark; hover,
// tap, focus and arrow keys; the readout; SVG/PNG/HTML export; 360 px; 4096 tokens.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, assertClose, readPNG, ref, setData, vectors } from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;

// Position of each token's computed background on the --attn-low → --attn-high line, its text
// colour's WCAG contrast on it, the text and the weight it says.
function readText(page, id) {
  return page.evaluate((id) => {
    const el = document.getElementById(id);
    const style = getComputedStyle(el);
    const hex = (name) => { const v = style.getPropertyValue(name).trim().slice(1); return [0, 2, 4].map((i) => parseInt(v.slice(i, i + 2), 16)); };
    const low = hex('--attn-low'), high = hex('--attn-high'), d = high.map((x, c) => x - low[c]);
    const rgb = (css) => css.match(/[\d.]+/g).slice(0, 3).map(Number);
    const lum = (c) => { const [r, g, b] = c.map((x) => { const s = x / 255; return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
    const contrast = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
    const spans = [...el.shadowRoot.querySelectorAll('.tok')];
    return {
      text: el.shadowRoot.querySelector('.text').textContent,
      tokens: spans.map((s) => {
        const cs = getComputedStyle(s);
        const masked = s.classList.contains('masked');
        const bg = masked ? hex('--attn-bg') : rgb(cs.backgroundColor), fg = rgb(cs.color);
        return { word: s.textContent, masked, weight: s.dataset.weight, selected: s.getAttribute('aria-selected') === 'true',
          t: d.reduce((a, dc, c) => a + dc * (bg[c] - low[c]), 0) / d.reduce((a, dc) => a + dc * dc, 0), contrast: contrast(bg, fg) };
      }),
      readout: el.shadowRoot.querySelector('.readout').textContent,
    };
  }, id);
}

// The scales in float64 (independent of the element).
function mapped(kind, matrix, n, masked = () => false) {
  let all = 0;
  for (let c = 0; c < n * n; c++) if (!masked(Math.floor(c / n), c % n)) all = Math.max(all, matrix[c]);
  return Array.from(matrix, (w, c) => {
    const i = Math.floor(c / n);
    let rowMax = 0;
    for (let j = 0; j < n; j++) if (!masked(i, j)) rowMax = Math.max(rowMax, matrix[i * n + j]);
    const t = kind === 'sqrt' ? Math.sqrt(w) : kind === 'log' ? Math.log10(w / 1e-3) / 3 : kind === 'row' ? w / rowMax : kind === 'max' ? w / all : w;
    return w > 0 ? Math.min(1, Math.max(0, t)) : 0;
  });
}

describe('<attn-text>', () => {
  let browser, page;
  const data = vectors(SENTENCE, { dK: 8, seed: 7, spread: 1 });
  const n = SENTENCE.length;
  const want = ref.attention(data.q, data.k, data.v, { dK: 8 }).weights;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 360, height: 900 } });
    page = await browser.fixture(`<attn-text id="t" query="7"></attn-text><attn-text id="dark" theme="dark"></attn-text>
      <attn-text id="pieces"></attn-text><attn-text id="big"></attn-text><attn-text id="model" model="use-lite" text="The cat sat on the mat." layer="1" head="mean"></attn-text>`);
    assert.equal(await setData(page, 't', data.json), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  for (const direction of ['to', 'from'])
    for (const kind of ['linear', 'sqrt', 'log', 'row', 'max'])
      it(`direction=${direction}, color-scale=${kind}: each tint is the mapping of the float64 weight`, async () => {
        await page.evaluate(async ([direction, kind]) => {
          const el = document.getElementById('t');
          el.setAttribute('direction', direction);
          el.setAttribute('color-scale', kind);
          await el.updateComplete;
        }, [direction, kind]);
        const { tokens } = await readText(page, 't');
        assert.equal(tokens.length, n);
        const m = mapped(kind, want, n), q = 7;
        const cell = (t) => (direction === 'to' ? q * n + t : t * n + q);
        assertClose(tokens.map((x) => x.t), tokens.map((_, t) => m[cell(t)]), TOLERANCE, `${direction}/${kind} tints`);
        assertClose(tokens.map((x) => Number(x.weight)), tokens.map((_, t) => want[cell(t)]), 1e-6, 'true weights in data-weight');
        for (const x of tokens) assert.ok(x.contrast >= 4.5, `contrast ${x.contrast.toFixed(2)} on “${x.word}”`);
        assert.deepEqual(tokens.map((x) => x.selected), tokens.map((_, t) => t === q));
      });

  it('hover, tap and arrow keys select; the readout gives the exact weight; change events say so', async () => {
    await page.evaluate(() => { const el = document.getElementById('t'); el.direction = 'to'; el.colorScale = 'linear'; });
    const span = page.locator('#t').locator('.tok').nth(2);
    await span.hover();
    assert.equal(await page.evaluate(() => document.getElementById('t').query), 2);
    let got = await readText(page, 't');
    const said = (text) => Number(/: ([\d.e-]+) ·/.exec(text)[1]);
    assert.ok(got.readout.startsWith('“sat” → “sat”: '), got.readout);
    assert.ok(Math.abs(said(got.readout) - want[2 * n + 2]) <= 1e-6, got.readout);
    await page.locator('#t').locator('.tok').nth(4).click();
    assert.equal(await page.evaluate(() => document.getElementById('t').query), 4);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.getElementById('t').query), 6);
    assert.equal(await page.evaluate(() => document.getElementById('t').getAttribute('query')), '6');
    const focused = await page.evaluate(() => document.getElementById('t').shadowRoot.activeElement?.dataset.index);
    assert.equal(focused, '6');
    await page.keyboard.press('End');
    assert.equal(await page.evaluate(() => document.getElementById('t').query), n - 1);
    got = await readText(page, 't');
    assert.ok(Math.abs(said(got.readout) - want[(n - 1) * n + n - 1]) <= 1e-6, got.readout);
    await page.mouse.move(0, 899);  // off the text: a pointer over a redrawn token would select it
    assertClean(page, browser);
  });

  it('the tokenizer\'s spaces are kept, ## joins its word, tokens are text (never HTML)', async () => {
    const tokens = ['<b>Hi</b>', ' world', ',', ' un', '##believ', '##able', '\n', 'Ġnext', '▁line', '&amp;'];
    const k = tokens.length;
    const attention = Array.from({ length: k }, (_, i) => Array.from({ length: k }, (_, j) => (i === j ? 0.5 : 0.5 / (k - 1))));
    assert.equal(await setData(page, 'pieces', { tokens, attention }), true);
    const got = await readText(page, 'pieces');
    assert.equal(got.text, '<b>Hi</b> world, unbelievable↵\n next line&amp;');
    assert.deepEqual(got.tokens.map((t) => t.word), ['<b>Hi</b>', 'world', ',', 'un', 'believ', 'able', '↵', 'next', 'line', '&amp;']);
    assert.equal(await page.evaluate(() => document.getElementById('pieces').shadowRoot.querySelectorAll('b').length), 0);
    const svg = await page.evaluate(() => document.getElementById('pieces').toSVG());
    assert.ok(svg.includes('&lt;b&gt;Hi&lt;/b&gt;') && !svg.includes('<b>'));
  });

  it('masks, head="mean", layer="rollout", hide: the tints follow the weights shown', async () => {
    const heads = 2, dK = 4;
    const q = ref.uniform(heads * n * dK, 41, -2, 2), k = ref.uniform(heads * n * dK, 42, -2, 2);
    const w = ref.attention(q, k, k, { dK, heads, causal: true }).weights;
    const mean = Array.from({ length: n * n }, (_, c) => (w[c] + w[n * n + c]) / 2);
    await page.evaluate(() => { const el = document.getElementById('t'); el.head = 'mean'; el.query = 5; el.colorScale = 'row'; el.mask = 'causal'; });
    assert.equal(await setData(page, 't', { tokens: SENTENCE, heads, dK, Q: Array.from(q), K: Array.from(k) }), true);
    const got = await readText(page, 't');
    const m = mapped('row', mean, n, (i, j) => j > i);
    got.tokens.forEach((x, t) => {
      assert.equal(x.masked, t > 5, `token ${t} masked`);
      if (!x.masked) assert.ok(Math.abs(x.t - m[5 * n + t]) <= TOLERANCE, `mean row tint ${t}: ${x.t} vs ${m[5 * n + t]}`);
    });
    await page.evaluate(async () => { const el = document.getElementById('t'); el.hide = '0'; await el.updateComplete; });
    const hidden = await readText(page, 't');
    assert.equal(hidden.tokens.length, n - 1);
    assert.equal(hidden.tokens[0].word, 'cat');
    await page.evaluate(async () => { const el = document.getElementById('t'); el.hide = null; el.head = 0; el.mask = 'none'; await el.updateComplete; });
  });

  it('projections (X, W_Q, W_K, W_V) and the use-lite model draw (every data form)', async () => {
    const d = 4, X = Array.from({ length: n }, (_, i) => Array.from(ref.uniform(d, 50 + i))), W = (s) => Array.from({ length: d }, (_, i) => Array.from(ref.uniform(d, s + i)));
    assert.equal(await setData(page, 'dark', { tokens: SENTENCE, X, W_Q: W(70), W_K: W(80), W_V: W(90) }), true);
    const dark = await readText(page, 'dark');
    for (const x of dark.tokens) assert.ok(x.contrast >= 4.5, `dark contrast ${x.contrast.toFixed(2)}`);
    assert.equal(await page.evaluate(() => document.getElementById('model').updateComplete), true);
    const model = await readText(page, 'model');
    assert.ok(model.tokens.length >= 6, JSON.stringify(model.tokens.map((t) => t.word)));
    assert.ok(model.text.includes('cat'), model.text);
    for (const x of model.tokens) assert.ok(x.contrast >= 4.5);
  });

  it('exports: SVG fills are the screen\'s tints; PNG and HTML are made; it fits 360 px', async () => {
    await page.evaluate(async () => { const el = document.getElementById('t'); el.colorScale = 'sqrt'; el.query = 3; el.direction = 'from'; await el.updateComplete; });
    assert.equal(await setData(page, 't', data.json), true);
    const screen = await readText(page, 't');
    const svg = await page.evaluate(() => document.getElementById('t').toSVG());
    const fills = [...svg.matchAll(/fill="#([0-9a-f]{6})" data-token="(\d+)" data-weight="([^"]+)"/g)];
    assert.equal(fills.length, n);
    const got = await page.evaluate((fills) => {
      const s = getComputedStyle(document.getElementById('t'));
      const hex = (v) => { v = v.replace('#', ''); return [0, 2, 4].map((i) => parseInt(v.slice(i, i + 2), 16)); };
      const low = hex(s.getPropertyValue('--attn-low').trim()), high = hex(s.getPropertyValue('--attn-high').trim());
      const d = high.map((x, c) => x - low[c]);
      return fills.map((f) => { const px = hex(f); return d.reduce((a, dc, c) => a + dc * (px[c] - low[c]), 0) / d.reduce((a, dc) => a + dc * dc, 0); });
    }, fills.map((f) => f[1]));
    assertClose(got, screen.tokens.map((t) => t.t), TOLERANCE, 'SVG tints vs screen tints');
    // The PNG decoded: behind each token (below its glyphs) the tint of its weight, as on screen.
    const png = await readPNG(page, 't', { at: 'bottom' });
    assert.deepEqual([png.width, png.height], [Math.round(png.svgWidth * 2), Math.round(png.svgHeight * 2)]);
    assertClose(png.cells.map((c) => c.value), screen.tokens.map((t) => t.t), TOLERANCE, 'PNG tints vs screen tints');
    const html = await page.evaluate(() => document.getElementById('t').toHTML());
    assert.ok(html.includes('<attn-text') && html.includes('color-scale="sqrt"') && html.includes('direction="from"'));
    const box = await page.evaluate(() => { const el = document.getElementById('t'); return { scroll: el.scrollWidth, width: el.clientWidth, page: document.documentElement.scrollWidth }; });
    assert.ok(box.scroll <= box.width + 1 && box.page <= 360, JSON.stringify(box));
  });

  it('4096 tokens draw; a bad direction is an attribute error; cross-attention is a clear error', async () => {
    const ok = await page.evaluate(async () => {
      const el = document.getElementById('big'), N = 4096;
      const attention = new Float32Array(N * N);
      for (let i = 0; i < N; i++) { attention[i * N + i] = 0.5; attention[i * N + ((i * 7 + 3) % N)] += 0.5; }
      el.data = { tokens: Array.from({ length: N }, (_, i) => ` t${i}`), attention, heads: 1 };
      await el.updateComplete;
      el.query = 10;
      await el.updateComplete;
      const spans = el.shadowRoot.querySelectorAll('.tok');
      return { count: spans.length, w: spans[73].dataset.weight, self: spans[10].dataset.weight, error: el.error };
    });
    assert.deepEqual(ok, { count: 4096, w: '0.5', self: '0.5', error: null });
    const bad = await page.evaluate(async () => {
      const el = document.getElementById('big');
      el.setAttribute('direction', 'sideways');
      let thrown = null;
      try { el.direction = 'up'; } catch (e) { thrown = e.name; }
      el.data = { queryTokens: ['a', 'b'], keyTokens: ['x', 'y', 'z'], attention: [[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]] };
      await el.updateComplete;
      return { attr: el.attributeErrors.map((e) => e.message), thrown, error: el.error };
    });
    assert.match(bad.attr[0], /direction must be "to" or "from" \(got "sideways"\)/);
    assert.equal(bad.thrown, 'RangeError');
    assert.match(bad.error, /attn-text shows self-attention/);
  });
});
