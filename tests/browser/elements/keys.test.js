// The page and corner keys docs/figures.md promises, on a table larger than ten rows:
// PageUp/PageDown move ±10 rows (heatmap, compare, lines) or to the first/last row (heads),
// Home/End to the first/last column, and with Ctrl to the corners. Where the cursor is, is read
// from what the figure says to a screen reader, with the weight there from the float64 reference.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { ref } from './helpers.js';

const n = 25, HEADS = 2, dK = 4, LAYERS = 3;
const TOKENS = Array.from({ length: n }, (_, i) => `w${i}`);
const q = ref.uniform(HEADS * n * dK, 61, -2, 2), k = ref.uniform(HEADS * n * dK, 62, -2, 2);
const DATA = { tokens: TOKENS, heads: HEADS, dK, Q: Array.from(q), K: Array.from(k) };
const WANT = ref.attention(q, k, k, { dK, heads: HEADS }).weights;
const A = WANT.subarray(0, n * n), B = WANT.subarray(n * n, 2 * n * n);
const LAYERED = { tokens: TOKENS.slice(0, 5), attention: ref.randomAttention(LAYERS, HEADS, 5, 7, 2) };

// Keys pressed one after the other, and the cell [row, column] each should reach.
const WALK = [
  ['ArrowRight', [0, 1]], ['PageDown', [10, 1]], ['PageDown', [20, 1]], ['PageDown', [24, 1]], ['PageUp', [14, 1]],
  ['End', [14, 24]], ['Home', [14, 0]], ['Control+End', [24, 24]], ['PageUp', [14, 24]], ['Control+Home', [0, 0]],
];

describe('PageUp/PageDown, Home/End and Ctrl+Home/End', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 1000, height: 900 } });
    page = await browser.fixture(`
      <attn-heatmap id="map" src="#run"></attn-heatmap>
      <attn-compare id="cmp" src="#run" head-a="0" head-b="1" view="all"></attn-compare>
      <attn-lines id="lines" src="#run"></attn-lines>
      <attn-heads id="heads"></attn-heads>
      <script type="application/json" id="run">${JSON.stringify(DATA)}</script>`);
    const ok = await page.evaluate(async (layered) => {
      await Promise.all(['attn-heatmap', 'attn-compare', 'attn-lines', 'attn-heads'].map((t) => customElements.whenDefined(t)));
      document.getElementById('heads').data = layered;
      return Promise.all(['map', 'cmp', 'lines', 'heads'].map((id) => document.getElementById(id).updateComplete));
    }, { ...LAYERED, attention: LAYERED.attention });
    assert.deepEqual(ok, [true, true, true, true]);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('<attn-heatmap>: the crosshair moves ±10 rows, to the row\'s ends and to the corners', async () => {
    await page.locator('#map').locator('.plot').focus();
    for (const [key, [i, j]] of WALK) {
      await page.keyboard.press(key);
      const live = await page.locator('#map').locator('[aria-live]').first().textContent();
      assert.equal(live, `Row “w${i}”, column “w${j}”: ${A[i * n + j].toFixed(4)}`, `after ${key}`);
    }
  });

  it('<attn-compare>: the shared crosshair does the same in every panel', async () => {
    await page.locator('#cmp').locator('.panels').focus();
    // Here the first key only shows the crosshair, at (0, 0).
    for (const [key, [i, j]] of [['ArrowRight', [0, 0]], ...WALK]) {
      await page.keyboard.press(key);
      const c = i * n + j, d = A[c] - B[c];
      const live = await page.locator('#cmp').locator('[aria-live]').textContent();
      assert.equal(live, `“w${i}” → “w${j}”: A ${A[c].toFixed(4)} · B ${B[c].toFixed(4)} · A−B ${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(4)}`, `after ${key}`);
    }
  });

  it('<attn-lines>: PageUp/PageDown move the focused token ±10, Home/End to the first and last', async () => {
    await page.locator('#lines').locator('.plot').focus();
    const focused = () => page.evaluate(() => document.getElementById('lines').focused);
    await page.keyboard.press('ArrowDown');
    assert.deepEqual(await focused(), { side: 'query', index: 0 });
    for (const [key, index] of [['PageDown', 10], ['PageDown', 20], ['PageDown', 24], ['PageUp', 14], ['Home', 0], ['End', 24], ['PageUp', 14]]) {
      await page.keyboard.press(key);
      assert.deepEqual(await focused(), { side: 'query', index }, `after ${key}`);
    }
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('PageDown');
    assert.deepEqual(await focused(), { side: 'key', index: 24 }, 'on the key side too');
    await page.keyboard.press('Escape');
  });

  it('<attn-heads>: PageUp/PageDown go to the first/last row of tiles, Ctrl+Home/End to the corners', async () => {
    const tile = () => page.evaluate(() => {
      const t = document.getElementById('heads').shadowRoot.activeElement;
      return t && [t.dataset.layer, t.dataset.head];
    });
    // Rows: the layers, then the rollout row; columns: the heads, Mean and Max.
    const rows = await page.evaluate(() => [...new Set([...document.getElementById('heads').shadowRoot.querySelectorAll('[role="gridcell"]')].map((t) => t.dataset.layer))]);
    assert.deepEqual(rows, ['0', '1', '2', 'rollout']);
    await page.locator('#heads').locator('[role="gridcell"][data-layer="1"][data-head="1"]').focus();
    await page.keyboard.press('PageUp');
    assert.deepEqual(await tile(), ['0', '1'], 'the first row, same column');
    await page.keyboard.press('PageDown');
    assert.equal((await tile())[0], 'rollout', 'the last row');
    await page.keyboard.press('Control+End');
    const last = await page.evaluate(() => {
      const tiles = [...document.getElementById('heads').shadowRoot.querySelectorAll('[role="gridcell"]')];
      const t = tiles.at(-1);
      return [t.dataset.layer, t.dataset.head];
    });
    assert.deepEqual(await tile(), last, 'the last tile');
    await page.keyboard.press('Control+Home');
    assert.deepEqual(await tile(), ['0', '0'], 'the first tile');
  });
});
