import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import {
  SENTENCE, assertClean, assertClose, changes, exportPNG, parseSVG, pixel, recordChanges, ref, referenceRow, setData, vectors,
} from './helpers.js';

// What the bars show: every key's weight (data-weight) and the bar's length (its scaleX).
const drawn = (page) => page.evaluate(() => {
  const el = document.getElementById('bars');
  const rows = [...el.shadowRoot.querySelectorAll('li.bar')];
  return {
    query: el.query,
    queries: el.shadowRoot.querySelectorAll('[role="radio"]').length,
    checked: [...el.shadowRoot.querySelectorAll('[role="radio"]')].findIndex((b) => b.getAttribute('aria-checked') === 'true'),
    weights: rows.map((li) => (li.dataset.weight === 'masked' ? null : Number(li.dataset.weight))),
    lengths: rows.map((li) => {
      const m = /scaleX\(([^)]+)\)/.exec(li.querySelector('.fill').style.transform);
      return m ? Number(m[1]) : NaN;
    }),
    labels: rows.map((li) => li.querySelector('.label').textContent),
    live: el.shadowRoot.querySelector('[aria-live]').textContent,
  };
});

// The engine's own row for the same inputs (lens.attention, called in the page).
const engineRow = (page, data, i, options = {}) => page.evaluate(([q, k, v, dK, i, options]) => {
  const el = document.getElementById('bars');
  const { weights } = el.lens.attention(Float32Array.from(q), Float32Array.from(k), Float32Array.from(v), { dK, ...options });
  const n = k.length / dK;
  return Array.from(weights.subarray(i * n, (i + 1) * n));
}, [[...data.q], [...data.k], [...data.v], data.dK, i, options]);

describe('<attn-bars>', () => {
  let browser, page;
  const data = vectors(SENTENCE, { dK: 4, seed: 7, spread: 1.5 });
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-bars id="bars" query="it"></attn-bars>');
    assert.equal(await setData(page, 'bars', data.json), true);
    await recordChanges(page, 'bars');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('draws one bar per token for the query given by its text, with the engine\'s weights', async () => {
    const d = await drawn(page);
    assert.equal(d.query, 7);
    assert.equal(d.queries, SENTENCE.length);
    assert.equal(d.checked, 7);
    assert.deepEqual(d.labels, SENTENCE);
    assertClose(d.weights, await engineRow(page, data, 7), 0, 'weights vs lens.attention');
    assertClose(d.weights, referenceRow(data, 7), 1e-5, 'weights vs float64 reference');
    assertClose(d.lengths, referenceRow(data, 7), 1e-5, 'bar lengths');
    assertClean(page, browser);
  });

  it('clicking a token makes it the query and fires change', async () => {
    const shadowButton = page.locator('#bars').locator('[role="radio"]', { hasText: /^cat$/ });
    await shadowButton.click();
    const d = await drawn(page);
    assert.equal(d.query, 1);
    assert.equal(await page.getAttribute('#bars', 'query'), '1');
    assertClose(d.weights, referenceRow(data, 1), 1e-5, 'row of "cat"');
    assert.deepEqual((await changes(page)).at(-1), { name: 'query', value: 1, user: true });
    assert.match(d.live, /“cat” \(token 2 of 11\) attends most to/);
  });

  it('arrow keys, Home and End move the query', async () => {
    await page.locator('#bars').locator('[role="radio"][aria-checked="true"]').focus();
    await page.keyboard.press('ArrowRight');
    assert.equal((await drawn(page)).query, 2);
    await page.keyboard.press('End');
    let d = await drawn(page);
    assert.equal(d.query, SENTENCE.length - 1);
    assertClose(d.weights, referenceRow(data, SENTENCE.length - 1), 1e-5, 'last row');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    d = await drawn(page);
    assert.equal(d.query, 1);
    assertClose(d.weights, referenceRow(data, 1), 1e-5, 'row 1');
  });

  it('a weight shows as a number when its bar has focus', async () => {
    await page.evaluate(() => { document.getElementById('bars').query = 7; });
    const bar = page.locator('#bars').locator('li.bar').nth(1);
    await bar.focus();
    const value = bar.locator('.value');
    assert.equal(await value.evaluate((v) => getComputedStyle(v).opacity), '1');
    assert.equal(Number(await value.textContent()).toFixed(2), referenceRow(data, 7)[1].toFixed(2));
    await page.keyboard.press('Enter');  // makes that key the query
    assert.equal((await drawn(page)).query, 1);
  });

  it('a huge scale makes the row one-hot at the largest score', async () => {
    await page.evaluate(async () => {
      const el = document.getElementById('bars');
      el.query = 7;
      el.scale = 1e4;
      await el.updateComplete;
    });
    const d = await drawn(page);
    const { scores } = ref.attention(data.q, data.k, data.v, { dK: 4 });
    const row = Array.from(scores.subarray(7 * 11, 8 * 11));
    const best = row.indexOf(Math.max(...row));
    assert.ok(d.weights[best] > 0.999, `weight of the best key is ${d.weights[best]}`);
    assert.ok(d.weights.every((w, j) => j === best || w < 1e-3));
  });

  it('temperature divides the scale, and "none" means 1', async () => {
    await page.evaluate(async () => {
      const el = document.getElementById('bars');
      el.scale = 'none';
      el.temperature = 2;
      await el.updateComplete;
    });
    assertClose((await drawn(page)).weights, referenceRow(data, 7, { scale: 0.5 }), 1e-5, 'scale 1/T');
    const log = await changes(page);
    assert.deepEqual(log.slice(-2).map((c) => c.name), ['scale', 'temperature']);
    await page.evaluate(async () => {
      const el = document.getElementById('bars');
      el.removeAttribute('scale');
      el.removeAttribute('temperature');
      await el.updateComplete;
    });
    assertClose((await drawn(page)).weights, referenceRow(data, 7), 1e-5, 'back to 1/√d_k');
  });

  it('the causal mask hides later keys and renormalises the rest', async () => {
    await page.evaluate(async () => {
      const el = document.getElementById('bars');
      el.setAttribute('mask', 'causal');
      el.query = 3;
      await el.updateComplete;
    });
    const d = await drawn(page);
    assert.deepEqual(d.weights.map((w) => w === null), SENTENCE.map((_, j) => j > 3));
    assertClose(d.weights.slice(0, 4), referenceRow(data, 3, { causal: true }).slice(0, 4), 1e-5, 'causal row');
    const masked = await page.locator('#bars').locator('li.bar.masked').count();
    assert.equal(masked, SENTENCE.length - 4);
    await page.evaluate(async () => { document.getElementById('bars').mask = 'none'; });
  });

  it('exports a valid SVG with the tokens and a PNG', async () => {
    const svg = await page.evaluate(() => document.getElementById('bars').toSVG());
    const parsed = await parseSVG(page, svg);
    assert.equal(parsed.ok, true, parsed.error);
    for (const t of SENTENCE) assert.ok(parsed.texts.includes(t), `token ${t} in the SVG`);
    // The PNG, decoded: each bar, measured in pixels along its middle (accent-coloured pixels up
    // to the track's low colour), is as long as its weight: one pixel of antialiasing at the end.
    const ratio = 2, { png } = await exportPNG(page, 'bars', { ratio });
    const [, w] = svg.match(/<svg [^>]*width="([\d.]+)"/).map(Number);
    assert.equal(png.width, Math.round(w * ratio));
    const weights = (await drawn(page)).weights;
    const bars = [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="(#[0-9a-f]{6})"\/><rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="[\d.]+" fill="(#[0-9a-f]{6})" data-weight=/g)];
    assert.equal(bars.length, SENTENCE.length, 'a track and a bar per key');
    const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    const near = (p, c) => Math.max(...p.map((v, i) => Math.abs(v - c[i])));
    bars.forEach((m, j) => {
      const [x, y, track, h] = m.slice(1, 5).map(Number), low = rgb(m[5]), accent = rgb(m[6]);
      const py = Math.floor((y + h / 2) * ratio), x0 = Math.round(x * ratio), x1 = Math.round((x + track) * ratio);
      let length = 0;
      for (let px = x0; px < x1; px++) {
        const p = pixel(png, px, py);
        length += near(p, accent) < near(p, low) ? 1 : 0;
      }
      const want = weights[j] * track * ratio;
      assert.ok(Math.abs(length - want) <= 1, `bar ${j}: ${length} px drawn, weight ${weights[j]} → ${want.toFixed(2)} px`);
    });
    // The toolbar's buttons download the same files.
    for (const kind of ['svg', 'png']) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#bars').locator(`button.export-${kind}`).click()]);
      assert.equal(download.suggestedFilename(), `attn-bars.${kind}`);
    }
  });

  it('the scan animation moves the query across the tokens', async () => {
    await page.evaluate(() => { document.getElementById('bars').query = 0; });
    await page.locator('#bars').locator('button.scan').click();
    await page.waitForFunction(() => document.getElementById('bars').query === 1);
    assert.equal(await page.evaluate(() => document.getElementById('bars').scanning), true);
    await page.locator('#bars').locator('button.scan').click();
    assert.equal(await page.evaluate(() => document.getElementById('bars').scanning), false);
    assertClean(page, browser);
  });
});

describe('<attn-bars autoplay>', () => {
  let browser;
  const data = vectors(SENTENCE, { dK: 4, seed: 7, spread: 1.5 });
  before(async () => { browser = await startBrowser(); });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  // A page with one autoplaying figure, `reducedMotion` emulated before the figure is made.
  async function autoplaying(reducedMotion) {
    const page = await browser.fixture('');
    await page.emulateMedia({ reducedMotion });
    const state = await page.evaluate(async (json) => {
      await customElements.whenDefined('attn-bars');
      const el = document.createElement('attn-bars');
      el.id = 'bars';
      el.setAttribute('autoplay', '');
      el.append(Object.assign(document.createElement('script'), { type: 'application/json', textContent: JSON.stringify(json) }));
      document.body.append(el);
      const ok = await el.updateComplete;
      await null;  // the figure starts scanning in its own updateComplete callback, queued before ours
      return { ok, scanning: el.scanning, query: el.query, pressed: el.shadowRoot.querySelector('button.scan').getAttribute('aria-pressed') };
    }, data.json);
    return { page, state };
  }

  it('scans the query across the tokens on its own once drawn', async () => {
    const { page, state } = await autoplaying('no-preference');
    assert.deepEqual(state, { ok: true, scanning: true, query: 0, pressed: 'true' });
    // The timer moves the query: wait for two moves (no clock limit: the per-test hang guard).
    await page.waitForFunction(() => document.getElementById('bars').query === 2);
    await page.evaluate(() => document.getElementById('bars').stop());
    assert.equal(await page.evaluate(() => document.getElementById('bars').scanning), false);
  });

  it('does not start when the reader prefers reduced motion; Scan then steps once', async () => {
    const { page, state } = await autoplaying('reduce');
    assert.deepEqual(state, { ok: true, scanning: false, query: 0, pressed: 'false' });
    // Longer than two periods of the scan timer (1.1 s): nothing moved by itself.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.deepEqual(await page.evaluate(() => [document.getElementById('bars').query, document.getElementById('bars').scanning]), [0, false]);
    await page.locator('#bars').locator('button.scan').click();
    assert.deepEqual(await page.evaluate(() => [document.getElementById('bars').query, document.getElementById('bars').scanning]), [1, false]);
  });
});
