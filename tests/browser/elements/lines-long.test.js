// <attn-lines> at 4096 tokens: rows are 0.3 px high, too thin to point at, so the pointer opens a
// loupe listing the tokens around it; hovering or clicking one of its rows picks exactly that
// token. What is drawn for the picked token is checked against its row computed here.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { LONG_N as N, assertClean, longRowKeys as rowKeys, longTokenText as tokenText, rowPoint, setLongData } from './helpers.js';

describe('<attn-lines> at 4096 tokens: the loupe', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-lines id="lines"></attn-lines><attn-heatmap id="map"></attn-heatmap>');
  });
  after(async () => { await browser?.close(); });

  it('hover opens a loupe on the tokens around the pointer; its rows pick exactly one token', async () => {
    assert.equal(await setLongData(page, 'lines'), true);
    assert.ok((await page.evaluate(() => document.getElementById('lines').layout.row)) < 1, 'rows thinner than a pixel');
    const p = await rowPoint(page, 'lines', 2000);
    await page.mouse.move(p.x, p.y);
    const loupe = await page.evaluate(() => {
      const el = document.getElementById('lines');
      return { magnifier: el.magnifier, rows: [...el.shadowRoot.querySelectorAll('.loupe-row')].map((r) => r.textContent),
        html: el.shadowRoot.querySelector('.loupe b') !== null };
    });
    const m = loupe.magnifier;
    assert.equal(m.side, 'query');
    assert.equal(m.count, 15);
    assert.ok(m.first <= 2000 && 2000 < m.first + m.count && Math.abs(m.first + 7 - 2000) <= 4, `loupe around 2000: ${JSON.stringify(m)}`);
    assert.deepEqual(loupe.rows, Array.from({ length: 15 }, (_, k) => `${m.first + k}${tokenText(m.first + k)}`));
    assert.equal(loupe.html, false, 'a token written as HTML is shown as text');
    // Across to the loupe (straight right: it stays put), then onto token 2003's row.
    const row = page.locator('#lines').locator('.loupe-row[data-index="2003"]');
    const box = await row.boundingBox();
    await page.mouse.move(box.x + 4, p.y, { steps: 4 });
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 3 });
    assert.deepEqual(await page.evaluate(() => document.getElementById('lines').magnifier), m, 'the loupe did not move');
    await page.waitForFunction(() => /token 2004 of 4096/.test(document.getElementById('lines').shadowRoot.querySelector('.readout').textContent));
    assert.match(await page.locator('#lines').locator('.readout').textContent(), /“<b>x<\/b>” \(token 2004 of 4096\)/);
    await row.click();
    const picked = await page.evaluate(async () => {
      const el = document.getElementById('lines');
      await el.updateComplete;
      return { query: el.query, focused: el.focused, lines: el.renderStats.lines };
    });
    assert.deepEqual([picked.query, picked.focused], [2003, { side: 'query', index: 2003 }]);
    assert.equal(picked.lines, rowKeys(2003).size, 'one line per key of row 2003');
    // The keyboard goes on from there, one token at a time.
    await page.locator('#lines').locator('.plot').focus();
    await page.keyboard.press('ArrowDown');
    const next = await page.evaluate(() => { const el = document.getElementById('lines'); return [el.query, el.renderStats.lines]; });
    assert.deepEqual(next, [2004, rowKeys(2004).size]);
    // A click straight on the plot picks the token under the pointer (the loupe opens beside the
    // pointer, never under it), also at the first rows where the loupe is pushed inside the plot.
    for (const i of [2, 1500]) {
      const at = await rowPoint(page, 'lines', i);
      const x = await page.evaluate(() => {
        const el = document.getElementById('lines'), l = el.layout, r = el.shadowRoot.querySelector('canvas').getBoundingClientRect();
        return r.left + (l.x0 + (l.x1 - l.x0) / 4) * (r.width / l.width);
      });
      await page.mouse.click(x, at.y);
      assert.equal(await page.evaluate(() => document.getElementById('lines').query), i, `a click on row ${i}`);
    }
    // A key on the right, near the end: the loupe opens beside the key column, on the last 15 keys.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    const k = await rowPoint(page, 'lines', 4090, 'key');
    await page.mouse.move(k.x, k.y);
    const km = await page.evaluate(() => document.getElementById('lines').magnifier);
    assert.deepEqual([km.side, km.first, km.count], ['key', N - 15, 15]);
    await page.mouse.move(0, 0);
    assert.equal(await page.evaluate(() => document.getElementById('lines').magnifier), null, 'leaving the plot closes it');
    assertClean(page, browser);
  });

  it('the 4096-token heatmap: a click pins the row under the pointer, not the whole-pixel row of the click', async () => {
    await page.evaluate(() => { document.getElementById('lines').data = null; });
    assert.equal(await setLongData(page, 'map'), true);
    for (const i of [7, 2003, 4090]) {
      const at = await page.evaluate((i) => {
        const el = document.getElementById('map');
        window.scrollBy(0, el.getBoundingClientRect().top + el.cellBox(i, 100).y - innerHeight / 2);  // the row on screen
        const c = el.cellBox(i, 100), r = el.getBoundingClientRect();
        return { x: r.left + c.x + c.width / 2, y: r.top + c.y + c.height / 2, cell: c.height };
      }, i);
      assert.ok(at.cell < 1, `cells thinner than a pixel (${at.cell})`);
      await page.mouse.click(at.x, at.y);
      assert.equal(await page.evaluate(() => document.getElementById('map').query), i, `row ${i}`);
      await page.mouse.click(at.x, at.y);  // again: released
    }
    assertClean(page, browser);
  });
});
