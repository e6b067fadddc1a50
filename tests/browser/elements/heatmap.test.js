import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import {
  SENTENCE, assertClean, assertClose, changes, parseSVG, readHeatmap, recordChanges, ref, setData, vectors,
} from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;  // an 8-bit step on the ramp's widest channel, with margin

describe('<attn-heatmap>', () => {
  let browser, page;
  const data = vectors(SENTENCE, { dK: 8, seed: 3, spread: 1.5 });
  const want = ref.attention(data.q, data.k, data.v, { dK: 8 }).weights;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-heatmap id="map"></attn-heatmap><attn-heatmap id="big"></attn-heatmap>');
    assert.equal(await setData(page, 'map', data.json), true);
    await recordChanges(page, 'map');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('draws n×n cells whose colours are the engine\'s weights', async () => {
    const { n, values } = await readHeatmap(page, 'map');
    assert.equal(n, SENTENCE.length);
    assert.equal(values.length, n * n);
    assertClose(values, Array.from(want), TOLERANCE, 'drawn weights vs float64 reference');
    const engine = await page.evaluate(() => Array.from(document.getElementById('map').weights));
    assertClose(engine, Array.from(want), 1e-5, 'el.weights');
    const legend = await page.locator('#map').locator('.legend').isVisible();
    assert.equal(legend, true);
    assertClean(page, browser);
  });

  it('clicking a cell pins its row (shown as bars); clicking it again releases it', async () => {
    const box = await page.evaluate(() => document.getElementById('map').cellBox(7, 1));
    const host = await page.locator('#map').boundingBox();
    await page.mouse.click(host.x + box.x + box.width / 2, host.y + box.y + box.height / 2);
    assert.equal(await page.evaluate(() => document.getElementById('map').query), 7);
    assert.equal(await page.locator('#map').locator('.pinned').isVisible(), true);
    const title = await page.locator('#map').locator('.pinned-title').textContent();
    const row = Array.from(want.subarray(7 * 11, 8 * 11));
    const best = row.indexOf(Math.max(...row));
    assert.ok(title.includes(`“it” (token 8 of 11) attends most to “${SENTENCE[best]}” ${row[best].toFixed(2)}`), title);
    // The crosshair readout shows the exact value under the pointer.
    const readout = await page.locator('#map').locator('.readout').textContent();
    assert.ok(readout.includes(`“it” → “cat”: ${Math.fround(want[7 * 11 + 1])}`.slice(0, 22)), readout);
    assert.deepEqual((await changes(page)).at(-1), { name: 'query', value: 7, user: true });
    await page.mouse.click(host.x + box.x + box.width / 2, host.y + box.y + box.height / 2);
    assert.equal(await page.evaluate(() => document.getElementById('map').query), -1);
    assert.equal(await page.locator('#map').locator('.pinned').isVisible(), false);
  });

  it('keyboard: arrows move the crosshair, Enter pins, a pinned row follows, Escape releases', async () => {
    await page.mouse.move(0, 0);
    await page.locator('#map').locator('.plot').blur();
    await page.locator('#map').locator('.plot').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    let live = await page.locator('#map').locator('[aria-live]').first().textContent();
    assert.equal(live, `Row “sat”, column “cat”: ${want[2 * 11 + 1].toFixed(4)}`);
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.getElementById('map').query), 2);
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.getElementById('map').query), 3);
    await page.keyboard.press('Escape');
    assert.equal(await page.evaluate(() => document.getElementById('map').query), -1);
    await page.keyboard.press('End');
    live = await page.locator('#map').locator('[aria-live]').first().textContent();
    assert.match(live, /^Row “on”, column “\.”/);
  });

  it('masks are drawn as hatching, not as small weights; the rest match the masked softmax', async () => {
    const keyMask = SENTENCE.map((_, j) => (j === 9 ? 0 : 1));
    await setData(page, 'map', { ...data.json, keyMask });
    await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.mask = 'causal padding';
      await el.updateComplete;
    });
    const { n, values } = await readHeatmap(page, 'map');
    const masked = ref.attention(data.q, data.k, data.v, { dK: 8, causal: true, keyMask: Uint8Array.from(keyMask) }).weights;
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        const hidden = j > i || j === 9;
        if (hidden) assert.equal(values[i * n + j], null, `cell ${i},${j} is hatched`);
        else assert.ok(Math.abs(values[i * n + j] - masked[i * n + j]) <= TOLERANCE, `cell ${i},${j}`);
      }
    // A tiny weight is a colour on the ramp, a masked one is not.
    assert.equal(await page.evaluate(() => document.getElementById('map').isMasked(0, 1)), true);
    assert.equal(await page.locator('#map').locator('.legend canvas').nth(1).isVisible(), true);
    await page.evaluate(() => { document.getElementById('map').mask = 'none'; });
  });

  it('a huge scale makes every row one-hot', async () => {
    await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.setAttribute('scale', '10000');
      await el.updateComplete;
    });
    const { n, values } = await readHeatmap(page, 'map');
    const { scores } = ref.attention(data.q, data.k, data.v, { dK: 8 });
    for (let i = 0; i < n; i++) {
      const row = Array.from(scores.subarray(i * n, (i + 1) * n));
      const best = row.indexOf(Math.max(...row));
      values.slice(i * n, (i + 1) * n).forEach((w, j) =>
        assert.ok(Math.abs(w - (j === best ? 1 : 0)) <= TOLERANCE, `row ${i} key ${j}: ${w}`));
    }
    await page.evaluate(() => document.getElementById('map').removeAttribute('scale'));
  });

  it('exports a valid SVG with the tokens and one rect per cell', async () => {
    await page.evaluate(async () => { document.getElementById('map').query = 'it'; await document.getElementById('map').updateComplete; });
    const parsed = await parseSVG(page, await page.evaluate(() => document.getElementById('map').toSVG()));
    assert.equal(parsed.ok, true, parsed.error);
    for (const t of SENTENCE) assert.ok(parsed.texts.includes(t), `token ${t}`);
    assert.ok(parsed.rects >= SENTENCE.length ** 2);
    assert.equal(parsed.scripts, 0);
  });

  it('n = 2048: draws the cells once, hovering redraws only the overlay, values match', async () => {
    const n = 2048, dK = 16;
    const q = ref.uniform(n * dK, 11), k = ref.uniform(n * dK, 12), v = ref.uniform(n * dK, 13);
    const ok = await page.evaluate(async ([q, k, v, n, dK]) => {
      const el = document.getElementById('big');
      el.data = { tokens: Array.from({ length: n }, (_, i) => `w${i}`), Q: new Float32Array(q), K: new Float32Array(k), V: new Float32Array(v), dK };
      return el.updateComplete;
    }, [[...q], [...k], [...v], n, dK]);
    assert.equal(ok, true);
    const before = await page.evaluate(() => ({ ...document.getElementById('big').renderStats }));
    await page.locator('#big').scrollIntoViewIfNeeded();  // the path below must be on screen
    const host = await page.locator('#big').boundingBox();
    const layout = await page.evaluate(() => document.getElementById('big').layout);
    const plot = await page.evaluate(() => document.getElementById('big').cellBox(0, 0));
    for (let s = 0; s < 40; s++)
      await page.mouse.move(host.x + plot.x + 5 + s * 7, host.y + plot.y + 5 + s * 9);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const afterHover = await page.evaluate(() => ({ ...document.getElementById('big').renderStats }));
    assert.equal(afterHover.cells, before.cells, 'the cells were not redrawn');
    assert.ok(afterHover.overlay > before.overlay, 'the crosshair was drawn');
    assert.equal(layout.n, n);
    // Rows from the engine match the float64 reference (two sampled rows).
    const got = await page.evaluate(() => {
      const w = document.getElementById('big').weights;
      return [Array.from(w.subarray(0, 2048)), Array.from(w.subarray(2047 * 2048, 2048 * 2048))];
    });
    const full = ref.attention(q, k, v, { dK }).weights;
    assertClose(got[0], Array.from(full.subarray(0, n)), 1e-5, 'row 0');
    assertClose(got[1], Array.from(full.subarray((n - 1) * n, n * n)), 1e-5, 'row 2047');
    assertClean(page, browser);
  });
});
