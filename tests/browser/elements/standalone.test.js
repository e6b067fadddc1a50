// toHTML(): one self-contained HTML file. Opened from file:// with every request refused, it
// draws the same weights (read back from the element and from the canvas pixels), keeps the
// state, stays interactive, follows a forced theme, shows hostile tokens as text, and exports
// itself again byte for byte. Also served from a static folder (http) with no other file.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

import { serve } from '../../../scripts/serve.mjs';
import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, readHeatmap, ready, setData, vectors } from './helpers.js';

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
    assert.ok(html.startsWith('<!doctype html>') && html.length < 400_000, `${html.length} characters`);
    const offline = await openOffline(html, 'heatmap');
    const got = await snapshot(offline, 'map');
    assert.equal(got.ok, true, got.error);
    assert.deepEqual(got.state, want.state);
    assert.deepEqual(got.tokens, want.tokens);
    assert.deepEqual(got.weights, want.weights, 'the same weights, bit for bit');
    assert.deepEqual((await readHeatmap(offline, 'map')).values, (await readHeatmap(page, 'map')).values, 'the same pixels');
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
    const html = await page.evaluate(() => document.getElementById('bars').toHTML({ theme: 'dark' }));
    const outside = html.replace(/<script type="module" id="attnlens-bundle">[\s\S]*?<\/script>/, '');
    assert.equal(outside.match(/<script/g).length, 1, 'besides the bundle, only the JSON data is a script');
    assert.ok(!/<[^/>]*alert/.test(outside), 'no token as markup');
    const offline = await openOffline(html, 'bars');
    const got = await snapshot(offline, 'bars');
    assert.equal(got.ok, true, got.error);
    assert.deepEqual(got.tokens, HOSTILE);
    assert.deepEqual(got.weights, want.weights);
    assert.deepEqual(offline.dialogs, [], 'no script ran from a token');
    const look = await offline.evaluate(() => {
      const el = document.getElementById('bars');
      return { theme: el.getAttribute('theme'), values: el.hasAttribute('values'), bg: getComputedStyle(document.body).backgroundColor, labels: [...el.shadowRoot.querySelectorAll('.queries button')].map((b) => b.textContent) };
    });
    assert.deepEqual([look.theme, look.values, look.bg], ['dark', true, 'rgb(22, 24, 28)']);
    assert.ok(look.labels.includes('</script><script>alert(1)</script>'.slice(0, 23) + '…') || look.labels.some((l) => l.startsWith('</script>')));
    assert.deepEqual(offline.problems, []);
    await offline.close();
    assertClean(page, browser);
  });

  it('model="use-lite" is inlined as its computed weights (no model files in the page)', async () => {
    const want = await snapshot(page, 'heads');
    if (!want.ok) {  // no add-on in this build: the figure says so; nothing to export
      await assert.rejects(page.evaluate(() => document.getElementById('heads').toHTML()));
      page.problems.length = 0;
      return;
    }
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
      assert.deepEqual((await snapshot(p, 'map')).weights, (await snapshot(page, 'map')).weights);
      assert.deepEqual(p.urls, ['/index.html']);
      assertClean(p, browser);
      await p.close();
    } finally {
      await server.close();
    }
  });
});
