import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, assertClose, changes, nested, parseSVG, recordChanges, ref, setData } from './helpers.js';

const cells = (page, id = 'heads') => page.evaluate((id) =>
  [...document.getElementById(id).shadowRoot.querySelectorAll('[role="gridcell"]')]
    .filter((c) => !c.classList.contains('aggregate'))
    .map((c) => ({ layer: Number(c.dataset.layer), head: Number(c.dataset.head), selected: c.getAttribute('aria-selected') === 'true' })), id);

const detailWeights = (page) => page.evaluate(async () => {
  const el = document.getElementById('heads');
  await el.heatmap.updateComplete;
  return Array.from(el.heatmap.weights);
});

describe('<attn-heads>', () => {
  let browser, page;
  const n = SENTENCE.length, dModel = 8, heads = 4;
  const x = ref.uniform(n * dModel, 31), wQ = ref.uniform(dModel * dModel, 32), wK = ref.uniform(dModel * dModel, 33);
  const wV = ref.uniform(dModel * dModel, 34);
  const want = ref.multiHead(x, { dModel, heads, wQ, wK, wV }).weights;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-heads id="heads" target="linked"></attn-heads><attn-bars id="linked"></attn-bars>');
    const json = { tokens: SENTENCE, heads, X: nested(x, n, dModel), W_Q: nested(wQ, dModel, dModel), W_K: nested(wK, dModel, dModel), W_V: nested(wV, dModel, dModel) };
    assert.equal(await setData(page, 'heads', json), true);
    assert.equal(await setData(page, 'linked', json), true);
    await recordChanges(page, 'heads');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('shows one small heatmap per head, computed by the engine\'s multi-head attention', async () => {
    const c = await cells(page);
    assert.equal(c.length, heads);
    assert.deepEqual(c.map((x) => x.selected), [true, false, false, false]);
    const all = await page.evaluate(() => Array.from(document.getElementById('heads').result.weights[0]));
    assertClose(all, Array.from(want), 1e-5, 'weights of every head');
    assertClose(await detailWeights(page), Array.from(want.subarray(0, n * n)), 1e-6, 'head 1 in the detail view');
    assertClean(page, browser);
  });

  it('clicking a head opens it in the linked views and fires change', async () => {
    await page.locator('#heads').locator('[role="gridcell"]').nth(2).click();
    assert.deepEqual(await page.evaluate(() => [document.getElementById('heads').layer, document.getElementById('heads').head]), [0, 2]);
    assertClose(await detailWeights(page), Array.from(want.subarray(2 * n * n, 3 * n * n)), 1e-6, 'head 3');
    assert.equal(await page.evaluate(() => document.getElementById('linked').head), 2);
    assert.deepEqual((await changes(page)).at(-1), { name: 'head', value: 2, user: true });
    assert.match(await page.locator('#heads').locator('.detail-title').textContent(), /head 3/);
  });

  it('arrow keys move between heads and Enter opens one', async () => {
    await page.locator('#heads').locator('[role="gridcell"][tabindex="0"]').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.getElementById('heads').head), 3);
    await page.keyboard.press('Home');
    await page.keyboard.press(' ');
    assert.equal(await page.evaluate(() => document.getElementById('heads').head), 0);
    assertClose(await detailWeights(page), Array.from(want.subarray(0, n * n)), 1e-6, 'head 1 again');
  });

  it('the query is shared with the detail view both ways', async () => {
    await page.evaluate(async () => { document.getElementById('heads').query = 7; await document.getElementById('heads').updateComplete; });
    assert.equal(await page.evaluate(() => document.getElementById('heads').heatmap.query), 7);
    // Pin a row by clicking the detail heatmap.
    const box = await page.evaluate(() => {
      const map = document.getElementById('heads').heatmap;
      const cell = map.cellBox(3, 0), host = map.getBoundingClientRect();
      return { x: host.left + cell.x + cell.width / 2, y: host.top + cell.y + cell.height / 2 };
    });
    await page.mouse.click(box.x, box.y);
    assert.equal(await page.evaluate(() => document.getElementById('heads').query), 3);
    assert.deepEqual((await changes(page)).at(-1), { name: 'query', value: 3, user: true });
  });

  it('precomputed [layers][heads][n][n] weights give a grid of layers × heads', async () => {
    const m = 3, layers = 2, hs = 3;
    const attention = Array.from({ length: layers }, (_, l) => Array.from({ length: hs }, (_, h) =>
      Array.from({ length: m }, (_, i) => {
        const row = Array.from({ length: m }, (_, j) => 1 + ((i + j + l + h) % m));
        const sum = row.reduce((a, b) => a + b);
        return row.map((w) => w / sum);
      })));
    assert.equal(await setData(page, 'heads', { tokens: ['a', 'b', 'c'], attention }), true);
    const c = await cells(page);
    assert.equal(c.length, layers * hs);
    assert.deepEqual(c.map((x) => `${x.layer}/${x.head}`), ['0/0', '0/1', '0/2', '1/0', '1/1', '1/2']);
    await page.locator('#heads').locator('[role="gridcell"][data-layer="1"][data-head="2"]').click();
    assertClose(await detailWeights(page), attention[1][2].flat(), 1e-6, 'layer 2, head 3');
    const parsed = await parseSVG(page, await page.evaluate(() => document.getElementById('heads').toSVG()));
    assert.equal(parsed.ok, true, parsed.error);
    for (const t of ['a', 'b', 'c']) assert.ok(parsed.title.includes(t));
    assert.ok(parsed.texts.includes('Layer 2') && parsed.texts.includes('H3'));
    assertClean(page, browser);
  });

  it('new weights of the same grid repaint the kept tiles as a new figure paints them, and the focus stays', async () => {
    // 3×3 self-attention, then 2 queries × 4 keys: the same tiles (1 layer, 2 heads, mean, max),
    // the second picture half as tall, so what the first left in the margins would show.
    const weights = (nQ, nK, seed) => [Array.from({ length: 2 }, (_, h) => Array.from({ length: nQ }, (_, i) => {
      const row = Array.from({ length: nK }, (_, j) => 1 + ((i * 5 + j * 3 + h * 7 + seed) % 11));
      const sum = row.reduce((a, b) => a + b);
      return row.map((w) => w / sum);
    }))];
    const first = { tokens: ['a', 'b', 'c'], attention: weights(3, 3, 1) };
    const second = { queryTokens: ['x', 'y'], keyTokens: ['k', 'l', 'm', 'n'], attention: weights(2, 4, 4) };
    const got = await page.evaluate(async ([first, second]) => {
      const make = () => {
        const el = document.createElement('attn-heads');
        el.style.width = '600px';
        return document.body.appendChild(el);
      };
      const tiles = (el) => [...el.shadowRoot.querySelectorAll('[role="gridcell"]')];
      // A lossless PNG of each canvas (no getImageData: Chromium warns at repeated readbacks).
      const pixels = (el) => tiles(el).map((cell) => cell.querySelector('canvas').toDataURL());
      const blank = (canvas) => Object.assign(document.createElement('canvas'), { width: canvas.width, height: canvas.height }).toDataURL();
      const kept = make(), fresh = make();
      kept.data = first;
      await kept.updateComplete;
      const before = tiles(kept), canvases = before.map((c) => c.querySelector('canvas'));
      const labelsBefore = before.map((c) => c.getAttribute('aria-label'));
      before[1].focus();
      kept.data = second;
      fresh.data = second;
      const ok = [await kept.updateComplete, await fresh.updateComplete];
      const after = tiles(kept);
      const out = {
        ok, count: [before.length, after.length, tiles(fresh).length],
        sameElements: after.every((c, i) => c === before[i] && c.querySelector('canvas') === canvases[i]),
        focused: kept.shadowRoot.activeElement === before[1],
        labels: after.map((c) => c.getAttribute('aria-label')), labelsBefore,
        freshLabels: tiles(fresh).map((c) => c.getAttribute('aria-label')),
        samePixels: JSON.stringify(pixels(kept)) === JSON.stringify(pixels(fresh)),
        painted: pixels(kept).map((p, i) => p !== blank(canvases[i])),
      };
      kept.remove();
      fresh.remove();
      return out;
    }, [first, second]);
    assert.deepEqual(got.ok, [true, true]);
    assert.deepEqual(got.count, [4, 4, 4], 'two heads, mean and max');
    assert.equal(got.sameElements, true, 'the tiles and their canvases are kept');
    assert.equal(got.focused, true, 'the focused tile keeps the focus');
    assert.deepEqual(got.labels, got.freshLabels);
    assert.match(got.labels[0], /2 queries × 4 keys/);
    assert.match(got.labelsBefore[0], /^H1, layer 1, head 1: /);
    assert.doesNotMatch(got.labelsBefore[0], /queries × /);
    assert.deepEqual(got.painted, [true, true, true, true]);
    assert.equal(got.samePixels, true, 'every tile\'s pixels equal a new figure\'s');
  });
});
