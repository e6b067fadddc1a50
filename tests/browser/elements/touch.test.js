// Taps (touch pointer events) work like clicks on every figure.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, rowPoint, setData, setLongData, vectors } from './helpers.js';

describe('figures on a touch screen', () => {
  let browser, page;
  const data = vectors(SENTENCE, { dK: 4, seed: 2 });
  before(async () => {
    browser = await startBrowser({ viewport: { width: 360, height: 740 }, contextOptions: { hasTouch: true, isMobile: true } });
    page = await browser.fixture('<attn-bars id="bars"></attn-bars><attn-heatmap id="map"></attn-heatmap><attn-heads id="heads"></attn-heads><attn-lines id="lines"></attn-lines>');
    for (const id of ['bars', 'map']) assert.equal(await setData(page, id, data.json), true);
    assert.equal(await setData(page, 'heads', { tokens: ['a', 'b'], attention: [[[[1, 0], [0.5, 0.5]], [[0.5, 0.5], [0, 1]]]] }), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  const tapCentre = async (locator) => {
    await locator.scrollIntoViewIfNeeded();
    const b = await locator.boundingBox();
    await page.touchscreen.tap(b.x + b.width / 2, b.y + b.height / 2);
  };

  it('tapping a token of the bars makes it the query', async () => {
    await tapCentre(page.locator('#bars').locator('[role="radio"]', { hasText: /^mat$/ }));
    assert.equal(await page.evaluate(() => document.getElementById('bars').query), 5);
  });

  it('tapping a heatmap cell pins its row', async () => {
    await page.locator('#map').scrollIntoViewIfNeeded();
    const box = await page.evaluate(() => {
      const el = document.getElementById('map'), c = el.cellBox(4, 2), r = el.getBoundingClientRect();
      return { x: r.left + c.x + c.width / 2, y: r.top + c.y + c.height / 2 };
    });
    await page.touchscreen.tap(box.x, box.y);
    assert.equal(await page.evaluate(() => document.getElementById('map').query), 4);
  });

  it('4096 lines: a tap focuses the nearest token and opens the loupe; a tap in the loupe picks exactly', async () => {
    assert.equal(await setLongData(page, 'lines'), true);
    await page.locator('#lines').locator('canvas').scrollIntoViewIfNeeded();
    const p = await rowPoint(page, 'lines', 1000);
    await page.touchscreen.tap(p.x, p.y);
    const first = await page.evaluate(() => { const el = document.getElementById('lines'); return { query: el.query, magnifier: el.magnifier }; });
    assert.ok(Math.abs(first.query - 1000) <= 4, `the nearest token (${first.query})`);
    assert.equal(first.magnifier.side, 'query');
    const b = await page.locator('#lines').locator('.loupe-row[data-index="1002"]').boundingBox();
    await page.touchscreen.tap(b.x + b.width / 2, b.y + b.height / 2);
    assert.equal(await page.evaluate(() => document.getElementById('lines').query), 1002);
  });

  it('tapping a head opens it', async () => {
    await tapCentre(page.locator('#heads').locator('[role="gridcell"]').nth(1));
    assert.equal(await page.evaluate(() => document.getElementById('heads').head), 1);
    assertClean(page, browser);
  });
});
