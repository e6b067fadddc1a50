// <attn-lines> at 4096 tokens: rows are 0.3 px high, too thin to point at, so the pointer opens a
// loupe listing the tokens around it; hovering or clicking one of its rows picks exactly that
// token. What is drawn for the picked token is checked against its row computed here.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { LONG_N as N, assertClean, longRowKeys as rowKeys, longTokenText as tokenText, rowPoint, setLongData } from './helpers.js';

describe('<attn-lines> at 4096 tokens: the loupe', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-lines id="lines"></attn-lines><attn-heatmap id="map"></attn-heatmap>');
  });
  afterEach(() => browser?.assertNoProblems());
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

  it('a picked token\'s lines, read from the canvas pixels, end at its row\'s keys, as opaque as their weights', async (t) => {
    assert.equal(await setLongData(page, 'lines'), true);
    await page.mouse.move(0, 0);  // no hover: the picked query is what is drawn
    const query = 2003;
    const r = await page.evaluate(async (query) => {
      const { BUCKETS, bucketAlpha, headColor, lineWidth } = await import('/elements/lib/lines-layout.js');
      const el = document.getElementById('lines');
      el.query = query;
      await el.updateComplete;
      const l = el.layout, canvas = el.shadowRoot.querySelector('canvas'), ratio = canvas.width / l.width;
      const copy = Object.assign(document.createElement('canvas'), { width: canvas.width, height: canvas.height });
      const ctx = copy.getContext('2d', { willReadFrequently: true });
      ctx.drawImage(canvas, 0, 0);
      const image = ctx.getImageData(0, 0, copy.width, copy.height).data;
      const bg = el.theme.bg, color = headColor(el.theme, 0), d = color.map((c, k) => c - bg[k]);
      // Down one pixel column: runs of pixels tinted towards the line colour; for each run its
      // centre (CSS px) and how much colour it holds (Σ of the blend fractions, in CSS px).
      const runs = (cssX) => {
        const x = Math.floor(cssX * ratio), out = [];
        let run = null;
        for (let y = 0; y < copy.height; y++) {
          const at = (y * copy.width + x) * 4;
          const f = d.reduce((a, dk, k) => a + dk * (image[at + k] - bg[k]), 0) / d.reduce((a, dk) => a + dk * dk, 0);
          if (f > 0.01) {
            run ??= { sum: 0, moment: 0 };
            run.sum += f;
            run.moment += f * (y + 0.5);
          } else if (run) { out.push({ y: run.moment / run.sum / ratio, amount: run.sum / ratio }); run = null; }
        }
        return out;
      };
      const x = l.x1 - 4;
      return { layout: { x0: l.x0, x1: l.x1, top: l.top, row: l.row, gap: l.gap, label: l.label }, x, lines: runs(x),
        boxes: runs(l.x1 + l.gap + l.label / 2), buckets: BUCKETS, alphas: [0.5, 0.3, 0.2].map((w) => bucketAlpha(Math.floor(w * BUCKETS))),
        widths: [0.5, 0.3, 0.2].map((w) => lineWidth(bucketAlpha(Math.floor(w * BUCKETS)), l.row)),
      };
    }, query);
    const l = r.layout, rowY = (i) => l.top + (i + 0.5) * l.row;
    // The row's keys and weights, by the rule the page used (setLongData): 0.5, 0.3, 0.2.
    const keys = [[query, 0.5], [(query * 7 + 3) % N, 0.3], [(query * 13 + 5) % N, 0.2]].sort((a, b) => a[0] - b[0]);
    assert.equal(new Set(keys.map(([j]) => j)).size, 3, 'three distinct keys, far apart');
    // Opacity: the weight's bucket of 32, at its middle; width: 0.75 px at this row height.
    const alphaOf = (w) => (Math.floor(w * r.buckets) + 0.5) / r.buckets;
    assert.deepEqual([r.alphas, r.widths], [[0.5, 0.3, 0.2].map(alphaOf), [0.75, 0.75, 0.75]], 'the figure\'s own opacity and width rules');
    // Lines: one run per key, where the line from the query's row to that key's row crosses x;
    // its colour, integrated down the column, is opacity × width ÷ cos(slope).
    assert.equal(r.lines.length, 3, `three lines cross x = ${r.x}: ${JSON.stringify(r.lines)}`);
    const report = [];
    keys.forEach(([j, w], k) => {
      const y0 = rowY(query), y1 = rowY(j), dx = l.x1 - l.x0, dy = y1 - y0;
      const y = y0 + dy * (r.x - l.x0) / dx, a = alphaOf(w);
      const want = a * 0.75 * Math.hypot(dx, dy) / dx, got = r.lines[k];
      report.push(`key ${j} (w ${w}): at y ${got.y.toFixed(2)} (want ${y.toFixed(2)}), colour ${got.amount.toFixed(3)} (want ${want.toFixed(3)})`);
      assert.ok(Math.abs(got.y - y) < 1, `the line to key ${j} crosses at y ${got.y}, want ${y}`);
      assert.ok(Math.abs(got.amount - want) <= 0.15 * want, `the line to key ${j} (weight ${w}): colour ${got.amount}, want ${want}`);
    });
    // Boxes beside the keys: a row high, as opaque as the weight.
    assert.equal(r.boxes.length, 3, `three weight boxes: ${JSON.stringify(r.boxes)}`);
    keys.forEach(([j, w], k) => {
      const got = r.boxes[k];
      report.push(`box ${j}: at y ${got.y.toFixed(2)} (want ${rowY(j).toFixed(2)}), colour ${got.amount.toFixed(3)} (want ${(w * l.row).toFixed(3)})`);
      assert.ok(Math.abs(got.y - rowY(j)) < 1, `the box of key ${j} at y ${got.y}, want ${rowY(j)}`);
      assert.ok(Math.abs(got.amount - w * l.row) <= 0.15 * w * l.row, `the box of key ${j} (weight ${w}): colour ${got.amount}, want ${w * l.row}`);
    });
    t.diagnostic(report.join('; '));
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
