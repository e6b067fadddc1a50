// Zoom and pan on <attn-heatmap>: wheel at the pointer, drag, two-finger pinch and one-finger
// pan on a touch screen, keyboard + / − / 0 and arrows that the window follows, the minimap and
// the reset button; what is drawn under zoom (pixels, crosshair readout) is the exact weights.
// Long inputs: 4096 tokens stay interactive, beyond 8192 precomputed (4096 computed) is refused;
// 8192 drawn: heatmap-long.test.js.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { assertClean, readHeatmap } from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;

// Row-stochastic weights made in the page (no 16M-number JSON over the wire): a band, a sink at
// token 0 and a seeded jitter, so neighbouring cells differ.
async function load(page, id, n, seed = 1) {
  return page.evaluate(async ([id, n, seed]) => {
    const el = document.getElementById(id);
    await customElements.whenDefined('attn-heatmap');
    const w = new Float32Array(n * n);
    let s = seed >>> 0;
    const next = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let j = 0; j < n; j++) {
        const x = Math.exp(-Math.abs(i - j) / 3) + 0.3 * next() + (j === 0 ? 0.5 : 0);
        w[i * n + j] = x;
        sum += x;
      }
      for (let j = 0; j < n; j++) w[i * n + j] /= sum;
    }
    window.__weights ??= {};
    window.__weights[id] = w;
    el.data = { tokens: Array.from({ length: n }, (_, i) => `w${i}`), attention: w, heads: 1 };
    return el.updateComplete;
  }, [id, n, seed]);
}

const view = (page, id) => page.evaluate((id) => document.getElementById(id).view, id);

// Client coordinates of cell (i, j)'s centre at the current zoom.
const centre = (page, id, i, j) => page.evaluate(([id, i, j]) => {
  const el = document.getElementById(id), b = el.cellBox(i, j), r = el.getBoundingClientRect();
  return { x: r.left + b.x + b.width / 2, y: r.top + b.y + b.height / 2, size: b.width };
}, [id, i, j]);

// Pixels at the centres of the visible cells → weights (helpers.readHeatmap), with the weights given.
async function readVisible(page, id) {
  const { cells } = await readHeatmap(page, id);
  const want = await page.evaluate(([id, at]) => at.map(([i, j]) => window.__weights[id][i * document.getElementById(id).layout.nK + j]),
    [id, cells.map((c) => [c.i, c.j])]);
  return cells.map((c, k) => ({ ...c, t: c.value, want: want[k] }));
}

for (const scheme of ['light', 'dark']) {
  describe(`heatmap zoom and pan (${scheme})`, () => {
    let browser, page;
    const n = 200;
    before(async () => {
      browser = await startBrowser({ colorScheme: scheme, viewport: { width: 680, height: 900 } });
      page = await browser.fixture('<attn-heatmap id="map"></attn-heatmap>');
      assert.equal(await load(page, 'map', n), true);
    });
    afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

    it('starts unzoomed; the wheel zooms in at the pointer, keeping that cell under it', async () => {
      const v0 = await view(page, 'map');
      assert.deepEqual([v0.zoom, v0.row, v0.col, v0.rows, v0.cols], [1, 0, 0, n, n]);
      assert.ok(v0.maxZoom > 8, `cells are small enough to zoom (${v0.maxZoom})`);
      assert.equal(await page.locator('#map').locator('.zoombar').isVisible(), false);
      const p = await centre(page, 'map', 120, 60);
      await page.mouse.move(p.x, p.y);
      for (let k = 0; k < 6; k++) await page.mouse.wheel(0, -200);
      await page.waitForFunction(() => document.getElementById('map').view.zoom > 3);
      const v = await view(page, 'map');
      const q = await centre(page, 'map', 120, 60);
      assert.ok(Math.abs(q.x - p.x) <= q.size && Math.abs(q.y - p.y) <= q.size, `cell (120, 60) stays under the pointer: ${p.x},${p.y} → ${q.x},${q.y}`);
      assert.ok(v.row < 120 && v.row + v.rows > 120 && v.col < 60 && v.col + v.cols > 60);
      assert.equal(await page.locator('#map').locator('.minimap').isVisible(), true, 'minimap shown');
      assert.match(await page.locator('#map').locator('.zoom-level').textContent(), /^Zoom \d/);
    });

    it('under zoom the pixels and the crosshair readout are the exact weights of the visible cells', async () => {
      const cells = await readVisible(page, 'map');
      assert.ok(cells.length > 100, `${cells.length} visible cells`);
      for (const c of cells) assert.ok(Math.abs(c.t - c.want) <= TOLERANCE, `cell ${c.i},${c.j}: drawn ${c.t}, weight ${c.want}`);
      const { i, j } = cells[Math.floor(cells.length / 2)];
      const p = await centre(page, 'map', i, j);
      await page.mouse.move(p.x, p.y);
      await page.waitForFunction(([i, j]) => document.getElementById('map').shadowRoot.querySelector('.readout').textContent.includes(`row ${i + 1}, column ${j + 1}`), [i, j]);
      const readout = await page.locator('#map').locator('.readout').textContent();
      const want = await page.evaluate(([i, j]) => window.__weights.map[i * 200 + j], [i, j]);
      assert.ok(readout.includes(`“w${i}” → “w${j}”: ${want}`), `${readout} has ${want}`);
    });

    it('dragging pans (and does not pin a row); the minimap click moves the window; Reset restores', async () => {
      const before = await view(page, 'map');
      const p = await centre(page, 'map', Math.ceil(before.row + before.rows / 2), Math.ceil(before.col + before.cols / 2));
      await page.mouse.move(p.x, p.y);
      await page.mouse.down();
      await page.mouse.move(p.x - 5 * p.size, p.y - 3 * p.size, { steps: 5 });
      await page.mouse.up();
      await page.waitForFunction((c) => document.getElementById('map').view.col > c + 1, before.col);
      const after = await view(page, 'map');
      assert.ok(Math.abs(after.col - before.col - 5) < 0.6 && Math.abs(after.row - before.row - 3) < 0.6, `panned by 5, 3 cells: ${JSON.stringify([before, after])}`);
      assert.equal(await page.evaluate(() => document.getElementById('map').query), -1, 'a drag is not a click');
      const mini = await page.locator('#map').locator('.minimap').boundingBox();
      await page.mouse.click(mini.x + mini.width * 0.9, mini.y + mini.height * 0.1);
      await page.waitForFunction(() => document.getElementById('map').view.col > 150);
      const m = await view(page, 'map');
      assert.ok(m.col + m.cols / 2 > 170 && m.row + m.rows / 2 < 30, `window centred near row 20, column 180: ${JSON.stringify(m)}`);
      await page.locator('#map').locator('button.zoom-reset').click();
      assert.equal((await view(page, 'map')).zoom, 1);
      assert.equal(await page.locator('#map').locator('.minimap').isVisible(), false);
    });

    it('keyboard: + zooms at the cursor, arrows move it and the window follows, − and 0 zoom out', async () => {
      await page.locator('#map').locator('.plot').focus();
      await page.keyboard.press('Control+End');
      await page.keyboard.press('Home');  // cursor at row 199, column 0
      await page.keyboard.press('+');
      await page.keyboard.press('+');
      await page.keyboard.press('=');
      let v = await view(page, 'map');
      assert.equal(v.zoom, 8);
      assert.ok(v.row + v.rows >= 199.99 && v.col === 0, `cursor (199, 0) visible: ${JSON.stringify(v)}`);
      for (let k = 0; k < 40; k++) await page.keyboard.press('ArrowRight');
      await page.waitForFunction(() => document.getElementById('map').view.col > 0);
      v = await view(page, 'map');
      assert.ok(v.col <= 40 && v.col + v.cols >= 41, `column 40 visible after 40 × ArrowRight: ${JSON.stringify(v)}`);
      const live = await page.locator('#map').locator('.sr-only[aria-live]').textContent();
      assert.match(live, /^Row “w199”, column “w40”: /);
      await page.keyboard.press('-');
      assert.equal((await view(page, 'map')).zoom, 4);
      await page.keyboard.press('0');
      assert.equal((await view(page, 'map')).zoom, 1);
      assertClean(page, browser);
    });
  });
}

describe('heatmap zoom on a touch screen', () => {
  let browser, page, cdp;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 360, height: 740 }, contextOptions: { hasTouch: true, isMobile: true } });
    page = await browser.fixture('<attn-heatmap id="map"></attn-heatmap>');
    assert.equal(await load(page, 'map', 300, 3), true);
    cdp = await browser.context.newCDPSession(page);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  const touch = (type, points) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map(([x, y], id) => ({ x, y, id })) });

  it('two fingers spreading apart zoom in around them; one finger then pans; a tap still pins', async () => {
    await page.locator('#map').locator('.plot').scrollIntoViewIfNeeded();
    const c = await centre(page, 'map', 150, 150);
    await touch('touchStart', [[c.x - 20, c.y], [c.x + 20, c.y]]);
    for (let k = 1; k <= 6; k++) await touch('touchMove', [[c.x - 20 - 12 * k, c.y], [c.x + 20 + 12 * k, c.y]]);
    await touch('touchEnd', []);
    await page.waitForFunction(() => document.getElementById('map').view.zoom > 2);
    const v = await view(page, 'map');
    assert.ok(v.zoom > 3 && v.zoom < 5, `pinch 40 px → 184 px zooms ≈ 4.6× (got ${v.zoom})`);
    assert.ok(v.col < 150 && v.col + v.cols > 150 && v.row < 150 && v.row + v.rows > 150, 'around the fingers');
    assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('map').shadowRoot.querySelector('.plot')).touchAction), 'none');
    const p = await centre(page, 'map', 150, 150);
    await touch('touchStart', [[p.x, p.y]]);
    for (let k = 1; k <= 5; k++) await touch('touchMove', [[p.x + 6 * k, p.y]]);
    await touch('touchEnd', []);
    await page.waitForFunction((col) => document.getElementById('map').view.col < col - 0.5, v.col);
    const panned = await view(page, 'map');
    assert.ok(Math.abs((v.col - panned.col) * p.size - 30) < 3, `30 px to the right moves the window left by 30 px: ${v.col} → ${panned.col}`);
    assert.equal(await page.evaluate(() => document.getElementById('map').query), -1, 'a pan is not a tap');
    const t = await centre(page, 'map', 151, 148);
    await page.touchscreen.tap(t.x, t.y);
    assert.equal(await page.evaluate(() => document.getElementById('map').query), 151);
    assertClean(page, browser);
  });
});

describe('long inputs', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-heatmap id="long"></attn-heatmap><attn-heatmap id="over"></attn-heatmap><attn-bars id="bars"></attn-bars>');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('4096 tokens: drawn, hover and zoom redraw only what they must, values exact', async () => {
    assert.equal(await load(page, 'long', 4096, 5), true);
    const stats0 = await page.evaluate(() => ({ ...document.getElementById('long').renderStats }));
    const p = await centre(page, 'long', 2000, 1000);
    await page.mouse.move(p.x, p.y);
    await page.mouse.move(p.x + 1, p.y + 1);
    await page.waitForFunction((o) => document.getElementById('long').renderStats.overlay > o, stats0.overlay);
    assert.equal(await page.evaluate(() => document.getElementById('long').renderStats.cells), stats0.cells, 'hover does not redraw the cells');
    await page.evaluate(() => document.getElementById('long').zoomTo(64, { row: 2048, col: 3000 }));
    const v = await view(page, 'long');
    assert.equal(v.zoom, 64);
    assert.ok(Math.abs(v.rows - 64) < 1e-9 && Math.abs(v.row + v.rows / 2 - 2048) < 1e-6);
    const cells = await readVisible(page, 'long');
    assert.ok(cells.length >= 60 * 60);
    const bad = cells.filter((c) => Math.abs(c.t - c.want) > TOLERANCE);
    assert.deepEqual(bad.slice(0, 3), [], 'zoomed cells drawn with their weights');
    assertClean(page, browser);
  });

  it('8193 precomputed tokens and computed inputs past 4096 are refused clearly (8192 are drawn: heatmap-long.test.js)', async () => {
    const r = await page.evaluate(async () => {
      const el = document.getElementById('over');
      const tokens = (n) => Array.from({ length: n }, (_, i) => `t${i}`);
      const out = [null];
      for (const data of [{ tokens: tokens(8193), attention: [[1]] }, { tokens: tokens(4097), Q: [[1]], K: [[1]] }]) {
        el.data = data;
        await el.updateComplete;
        out.push(el.error);
      }
      const bars = document.getElementById('bars');
      bars.data = { tokens: tokens(1025), attention: [[1]] };
      await bars.updateComplete;
      out.push(bars.error);
      return out;
    });
    assert.match(r[1], /8193 tokens is more than this figure can show \(at most 8192\)/);
    assert.match(r[2], /4097 tokens is more than this figure can show \(at most 4096\)/);
    assert.match(r[3], /1025 tokens is more than this figure can show \(at most 1024\)/);
  });
});
