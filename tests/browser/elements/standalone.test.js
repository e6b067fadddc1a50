// toHTML(): one self-contained HTML file. Opened from file:// with every request refused, it
// draws the same weights for every figure kind (and model data carried as numbers) (read back from the element and from the canvas pixels; bit for bit
// for precomputed weights, to float rounding for vectors: the file has the SIMD build, the page
// may run relaxed SIMD), keeps the
// state, stays interactive, follows a forced theme and width, shows hostile tokens as text, and exports
// itself again byte for byte; the toolbar's HTML button downloads the same file. Also served
// from a static folder (http) with no other file.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

import { serve } from '../../../scripts/serve.mjs';
import { requireDependency, startBrowser } from '../support.js';
import { SENTENCE, assertClean, assertClose, readHeatmap, ready, ref, setData, vectors } from './helpers.js';

const HOSTILE = ['</script><script>alert(1)</script>', '<!--', '&amp;', '"q"', "it's", 'ok'];

describe('standalone HTML (toHTML)', () => {
  let browser, page, folder;
  before(async () => {
    browser = await startBrowser();
    folder = await mkdtemp(path.join(tmpdir(), 'attnlens-standalone-'));
    page = await browser.fixture(`
      <attn-heatmap id="map" layer="0" head="1" query="it" scale="0.5" class="wide"></attn-heatmap>
      <attn-bars id="bars" query="2" values></attn-bars>
      <attn-heads id="heads" model="use-lite" text="Offline figures open anywhere."></attn-heads>`);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  /** Opens `html` from a file:// URL in a fresh page that refuses every request; returns the page. */
  async function openOffline(html, name) {
    const file = path.join(folder, `${name}.html`);
    await writeFile(file, html);
    const offline = await browser.newPage();
    offline.requests = [];
    offline.on('request', (r) => offline.requests.push(r.url()));
    offline.dialogs = [];
    offline.on('dialog', (d) => { offline.dialogs.push(d.message()); d.dismiss(); });
    const url = pathToFileURL(file).href;
    await offline.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
    await offline.goto(url);
    return offline;
  }

  const snapshot = (p, id) => p.evaluate(async (id) => {
    const el = document.getElementById(id);
    await customElements.whenDefined(el.localName);
    const ok = await el.updateComplete;
    return { ok, error: el.error, tokens: el.tokens, weights: el.weights && Array.from(el.weights), state: el.state, layers: el.layers, heads: el.heads };
  }, id);

  it('heatmap from vectors: same weights, pixels and state from file:// with no request; interactive', async () => {
    const two = vectors(SENTENCE, { dK: 8, seed: 42, spread: 2 });  // 8 columns = 2 heads of 4
    assert.equal(await setData(page, 'map', { tokens: SENTENCE, heads: 2, Q: two.json.Q, K: two.json.K, V: two.json.V }), true);
    const want = await snapshot(page, 'map');
    const html = await page.evaluate(() => document.getElementById('map').toHTML());
    assert.ok(html.startsWith('<!doctype html>') && html.length < 450_000, `${html.length} characters (the single-file bundle, about 390 KB, and the data)`);
    const offline = await openOffline(html, 'heatmap');
    const got = await snapshot(offline, 'map');
    assert.equal(got.ok, true, got.error);
    assert.deepEqual(got.state, want.state);
    assert.deepEqual(got.tokens, want.tokens);
    // The standalone file carries the SIMD build only; the page may run the relaxed one (fused
    // multiply-add), so vectors agree to float rounding (precomputed weights: bit for bit, below).
    assertClose(got.weights, want.weights, 1e-6, 'weights');
    const [pixelsGot, pixelsWant] = [(await readHeatmap(offline, 'map')).values, (await readHeatmap(page, 'map')).values];
    assertClose(pixelsGot, pixelsWant, 1.5 / 255, 'pixels read back');
    // Exported again from inside the standalone file: the same bytes (the bundle finds itself inline).
    assert.equal(await offline.evaluate(() => document.getElementById('map').toHTML()), html);
    // Interactive: the keyboard moves the pinned row, with a change event.
    await offline.evaluate(() => { window.__c = []; document.getElementById('map').addEventListener('change', (e) => window.__c.push(e.detail.name)); });
    await offline.locator('#map').locator('canvas.cells, [tabindex="0"]').first().focus();
    await offline.keyboard.press('ArrowDown');
    await offline.keyboard.press('Enter');
    assert.ok((await offline.evaluate(() => window.__c)).includes('query'), 'a change event from the keyboard');
    assert.deepEqual(offline.requests, [pathToFileURL(path.join(folder, 'heatmap.html')).href], 'no request but the file itself');
    assert.deepEqual(offline.problems, []);
    await offline.close();
    assertClean(page, browser);
  });

  it('hostile tokens stay text; a forced dark theme; the `values` attribute is kept', async () => {
    const data = vectors(HOSTILE, { dK: 3, seed: 43 });
    assert.equal(await setData(page, 'bars', data.json), true);
    const want = await snapshot(page, 'bars');
    const html = await page.evaluate(() => document.getElementById('bars').toHTML({ theme: 'dark', width: 300 }));
    const outside = html.replace(/<script type="module" id="attnlens-bundle">[\s\S]*?<\/script>/, '');
    assert.equal(outside.match(/<script/g).length, 1, 'besides the bundle, only the JSON data is a script');
    assert.ok(!/<[^/>]*alert/.test(outside), 'no token as markup');
    const offline = await openOffline(html, 'bars');
    const got = await snapshot(offline, 'bars');
    assert.equal(got.ok, true, got.error);
    assert.deepEqual(got.tokens, HOSTILE);
    assertClose(got.weights, want.weights, 1e-6, 'weights');
    assert.deepEqual(offline.dialogs, [], 'no script ran from a token');
    const look = await offline.evaluate(() => {
      const el = document.getElementById('bars');
      return { theme: el.getAttribute('theme'), values: el.hasAttribute('values'), bg: getComputedStyle(document.body).backgroundColor, labels: [...el.shadowRoot.querySelectorAll('.queries button')].map((b) => b.textContent), width: el.getBoundingClientRect().width };
    });
    assert.deepEqual([look.theme, look.values, look.bg, look.width], ['dark', true, 'rgb(22, 24, 28)', 300]);
    assert.ok(look.labels.includes('</script><script>alert(1)</script>'.slice(0, 23) + '…') || look.labels.some((l) => l.startsWith('</script>')));
    assert.deepEqual(offline.problems, []);
    await offline.close();
    assertClean(page, browser);
  });

  it('model="use-lite" is inlined as its computed weights (no model files in the page)', async () => {
    const want = await snapshot(page, 'heads');
    requireDependency('the model add-on (USE-lite)', want.ok, `scripts/build.sh builds it; the figure says: ${want.error}`);
    const html = await page.evaluate(() => document.getElementById('heads').toHTML());
    assert.ok(!html.includes('model="use-lite"'));
    const offline = await openOffline(html, 'heads');
    const got = await snapshot(offline, 'heads');
    assert.equal(got.ok, true, got.error);
    assert.deepEqual([got.layers, got.heads, got.tokens], [want.layers, want.heads, want.tokens]);
    assert.deepEqual(got.weights, want.weights);
    await offline.close();
    assertClean(page, browser);
  });

  it('lines and compare (two heads of one data, two sentences): the standalone file exports the same SVG', async () => {
    // Precomputed weights, so that both files draw the very same numbers (see above).
    const one = { tokens: ['we', 'compare', 'two', 'heads'], attention: ref.randomAttention(1, 2, 4, 44) };
    const other = { tokens: ['we', 'compare', 'two', 'texts'], attention: ref.randomAttention(1, 1, 4, 45) };
    const cases = [
      ['<attn-lines id="x" heads="all" threshold="0.1"></attn-lines>', one],
      ['<attn-compare id="x" head-a="0" head-b="1" view="side-by-side"></attn-compare>', one],
      ['<attn-compare id="x"></attn-compare>', { a: one, b: other }],
    ];
    for (const [tag, data] of cases) {
      const p = await browser.fixture(tag, { name: 'two' });
      assert.equal(await setData(p, 'x', data), true, `${tag}: ${await p.evaluate(() => document.getElementById('x').error)}`);
      const [svg, html] = await p.evaluate(async () => { const el = document.getElementById('x'); return [el.toSVG(), await el.toHTML()]; });
      const offline = await openOffline(html, 'two');
      const got = await offline.evaluate(async () => {
        const el = document.getElementById('x');
        await customElements.whenDefined(el.localName);
        return (await el.updateComplete) ? el.toSVG() : `error: ${el.error}`;
      });
      assert.equal(got, svg, tag);
      assert.deepEqual(offline.problems, [], tag);
      await offline.close();
      assertClean(p, browser);
      await p.close();
    }
  });

  it('every figure kind from file:// with every request refused: the same weights (and SVG for data carried as numbers)', async () => {
    const cross = { queryTokens: ['le', 'chat', '<dort>'], keyTokens: ['the', 'cat', '&', 'sleeps', '😀'], attention: ref.randomAttention(2, 2, 5, 46).map((layer) => layer.map((rows) => rows.slice(0, 3))) };
    const layered = { tokens: ['[CLS]', 'שלום', 'a&b', '"q"', '[SEP]'], attention: ref.randomAttention(2, 3, 5, 48) };
    const small = vectors(['we', 'need', '<more>', 'data'], { dK: 3, seed: 49 }).json;
    // [tag, data or null (the tag has its own source), exact: the file draws the page's numbers
    // (precomputed or model weights, a mean), not ones it computes with its own build]
    const cases = [
      ['<attn-pipeline id="x" query="2" step="softmax" mask="causal"></attn-pipeline>', small, false],
      ['<attn-heatmap id="x" model="stories260K" text="Once upon a time" layer="3" head="1" query="2"></attn-heatmap>', null, true],
      ['<attn-bars id="x" layer="1" head="1" query="chat"></attn-bars>', cross, true],
      ['<attn-heatmap id="x" layer="1" head="mean" hide="[CLS] [SEP]" renormalize query="1"></attn-heatmap>', layered, true],
      ['<attn-heads id="x" layer="1" head="2"></attn-heads>', layered, true],
      // The rollout is a product of matrices, computed in the file by its SIMD128 build.
      ['<attn-heatmap id="x" layer="rollout" query="2"></attn-heatmap>', layered, false],
      ['<attn-lines id="x" layer="1" heads="all" key="cat"></attn-lines>', cross, true],
    ];
    for (const [tag, data, exact] of cases) {
      const p = await browser.fixture(tag, { name: 'kinds' });
      const ok = data ? await setData(p, 'x', data) : await ready(p, 'x');
      assert.equal(ok, true, `${tag}: ${await p.evaluate(() => document.getElementById('x').error)}`);
      const want = await snapshot(p, 'x');
      const [svg, html] = await p.evaluate(async () => { const el = document.getElementById('x'); return [el.toSVG(), await el.toHTML()]; });
      assert.ok(!/model=|stories260K\.bin|tok512/.test(html.replace(/<script type="module" id="attnlens-bundle">[\s\S]*?<\/script>/, '')), `${tag}: data, not a model`);
      const offline = await openOffline(html, 'kinds');
      const got = await snapshot(offline, 'x');
      assert.equal(got.ok, true, `${tag}: ${got.error}`);
      assert.deepEqual([got.state, got.tokens, got.layers, got.heads], [want.state, want.tokens, want.layers, want.heads], tag);
      if (exact) {
        assert.deepEqual(got.weights, want.weights, `${tag}: weights`);
        assert.equal(await offline.evaluate(() => document.getElementById('x').toSVG()), svg, `${tag}: SVG`);
      } else {
        assertClose(got.weights, want.weights, 1e-6, `${tag}: weights`);
      }
      assert.deepEqual(offline.requests, [pathToFileURL(path.join(folder, 'kinds.html')).href], `${tag}: no request but the file`);
      assert.deepEqual(offline.problems, [], tag);
      await offline.close();
      assertClean(p, browser);
      await p.close();
    }
  });

  it('the toolbar\'s HTML button downloads the same file', async () => {
    const want = await page.evaluate(() => document.getElementById('map').toHTML());
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('#map').locator('button.export-html').click(),
    ]);
    assert.equal(download.suggestedFilename(), 'attn-heatmap.html');
    assert.equal(await readFile(await download.path(), 'utf8'), want);
    assertClean(page, browser);
  });

  it('served from a static folder over http: the one file is all it needs', async () => {
    const html = await page.evaluate(() => document.getElementById('map').toHTML());
    await writeFile(path.join(folder, 'index.html'), html);
    const server = await serve({ root: folder, port: 0, index: '/index.html', headers: {} });
    try {
      const p = await browser.newPage();
      p.urls = [];
      p.on('request', (r) => p.urls.push(new URL(r.url()).pathname));
      await p.goto(`${server.url}/index.html`);
      assert.equal((await ready(p, 'map')), true);
      assertClose((await snapshot(p, 'map')).weights, (await snapshot(page, 'map')).weights, 1e-6, 'weights');
      assert.deepEqual(p.urls, ['/index.html']);
      assertClean(p, browser);
      await p.close();
    } finally {
      await server.close();
    }
  });
});
