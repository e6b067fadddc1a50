// <attn-lines>: what is drawn (canvas pixels of the weight boxes and lines, the SVG's vector
// lines) against the float64 reference; focus by keyboard, pointer and touch; several heads;
// long inputs; small screens; bad attributes.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, assertClose, changes, readPNG, recordChanges, ref, setData } from './helpers.js';

const n = SENTENCE.length, HEADS = 3, dK = 4;
const q = ref.uniform(HEADS * n * dK, 21, -2, 2), k = ref.uniform(HEADS * n * dK, 22, -2, 2);
const DATA = { tokens: SENTENCE, heads: HEADS, dK, Q: Array.from(q), K: Array.from(k) };
const WANT = ref.attention(q, k, k, { dK, heads: HEADS }).weights;  // [heads, n, n], float64
const weight = (h, i, j) => WANT[(h * n + i) * n + j];
const THRESHOLD = 0.01;

/** The lines in the element's SVG export: [{ head, query, key, weight }], and its texts. */
function svgLines(page, id) {
  return page.evaluate((id) => {
    const doc = new DOMParser().parseFromString(document.getElementById(id).toSVG(), 'image/svg+xml');
    if (doc.querySelector('parsererror')) throw new Error('SVG does not parse');
    return {
      lines: [...doc.querySelectorAll('path[data-query]')].map((p) => ({
        head: Number(p.dataset.head), query: Number(p.dataset.query), key: Number(p.dataset.key), weight: Number(p.dataset.weight),
      })),
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
      scripts: doc.querySelectorAll('script, foreignObject').length,
    };
  }, id);
}

/**
 * Reads the canvas back: for each row of the column opposite the focused token, the weight box's
 * opacity (pixel at the column's right edge, against --attn-bg and the head's colour
 * `colorVar`), and whether a line reaches each row (pixels next to the line's end differ from
 * the background).
 */
function readCanvas(page, id, colorVar) {
  return page.evaluate(([id, colorVar]) => {
    const el = document.getElementById(id);
    const l = el.layout, f = el.focused;
    const canvas = el.shadowRoot.querySelector('.plot canvas');
    const ratio = canvas.width / l.width;
    const style = getComputedStyle(el);
    const rgb = (name) => {
      const hex = style.getPropertyValue(name).trim().slice(1);
      return [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
    };
    const bg = rgb('--attn-bg'), color = rgb(colorVar);
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const ctx = copy.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(canvas, 0, 0);
    const px = (x, y) => [...ctx.getImageData(Math.floor(x * ratio), Math.floor(y * ratio), 1, 1).data].slice(0, 3);
    let channel = 0;
    for (let c = 1; c < 3; c++) if (Math.abs(color[c] - bg[c]) > Math.abs(color[channel] - bg[channel])) channel = c;
    const count = f.side === 'query' ? l.nK : l.nQ;
    const boxX = f.side === 'query' ? l.width - 2 : 1;
    const y = (i) => l.top + (i + 0.5) * l.row;
    const boxes = [], reached = [];
    for (let t = 0; t < count; t++) {
      boxes.push((px(boxX, y(t))[channel] - bg[channel]) / (color[channel] - bg[channel]));
      // 4 px inside the far end of the line from the focused token to row t.
      const far = f.side === 'query' ? l.x1 - 4 : l.x0 + 4;
      const from = y(f.index), to = y(t);
      const at = f.side === 'query' ? from + (to - from) * (far - l.x0) / (l.x1 - l.x0) : from + (to - from) * (l.x1 - far) / (l.x1 - l.x0);
      let off = 0;
      for (let dy = -2; dy <= 2; dy++) off = Math.max(off, ...px(far, at + dy).map((c, i) => Math.abs(c - bg[i])));
      reached.push(off);
    }
    return { boxes, reached };
  }, [id, colorVar]);
}

describe('<attn-lines>', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 800, height: 900 } });
    page = await browser.fixture('<attn-lines id="lines"></attn-lines><attn-lines id="multi" heads="0 2"></attn-lines><attn-lines id="big"></attn-lines>');
    assert.equal(await setData(page, 'lines', DATA), true);
    assert.equal(await setData(page, 'multi', DATA), true);
    await recordChanges(page, 'lines');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('without focus draws every line at or above the threshold, once into a cached layer', async () => {
    const { lines } = await svgLines(page, 'lines');
    const want = [];
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (weight(0, i, j) >= THRESHOLD) want.push(`${i}-${j}`);
    assert.deepEqual(lines.map((l) => `${l.query}-${l.key}`).sort(), want.sort());
    for (const l of lines) assert.ok(Math.abs(l.weight - weight(0, l.query, l.key)) < 1e-5, `line ${l.query}→${l.key}`);
    const stats = await page.evaluate(() => ({ ...document.getElementById('lines').renderStats }));
    assert.equal(stats.lines, want.length, 'the canvas drew the same number of lines');
    assert.ok(stats.strokes <= 32, `one stroke per opacity bucket (${stats.strokes})`);
  });

  it('focusing a query draws its row: lines and weight boxes match the reference', async () => {
    await page.evaluate(async () => { const el = document.getElementById('lines'); el.query = 'it'; await el.updateComplete; });
    const i = 7;
    const { lines } = await svgLines(page, 'lines');
    const row = Array.from({ length: n }, (_, j) => weight(0, i, j));
    assert.deepEqual(lines.map((l) => l.key), row.map((w, j) => (w >= THRESHOLD ? j : -1)).filter((j) => j >= 0));
    for (const l of lines) {
      assert.equal(l.query, i);
      assert.ok(Math.abs(l.weight - row[l.key]) < 1e-5, `key ${l.key}: ${l.weight} vs ${row[l.key]}`);
    }
    const { boxes, reached } = await readCanvas(page, 'lines', '--attn-accent');
    boxes.forEach((b, j) => assert.ok(Math.abs(b - row[j]) <= 2 / 160, `box ${j}: drawn ${b}, want ${row[j]}`));
    reached.forEach((off, j) => {
      if (row[j] >= 0.1) assert.ok(off > 5, `a line reaches key ${j} (w ${row[j]}): ${off}`);
      if (row[j] < THRESHOLD) assert.ok(off <= 2, `no line to key ${j} (w ${row[j]})`);
    });
    // The live region and the readout name the strongest keys, in order.
    const top = row.map((w, j) => [w, j]).sort((a, b) => b[0] - a[0]).slice(0, 3);
    const want = `“it” (token 8 of 11) looks most at ${top.map(([w, j]) => `“${SENTENCE[j]}” ${w.toFixed(2)}`).join(', ').replace(/, ([^,]*)$/, ' and $1')}.`;
    assert.equal(await page.locator('#lines').locator('[aria-live]').textContent(), want);
    assert.equal(await page.locator('#lines').locator('.readout').textContent(), want);
  });

  it('clicking a key shows who looks at it (its column); clicking it again shows every line', async () => {
    const j = 1;
    const box = await page.evaluate((j) => {
      const el = document.getElementById('lines'), l = el.layout, r = el.shadowRoot.querySelector('.plot canvas').getBoundingClientRect();
      return { x: r.left + l.x1 + l.gap + 10, y: r.top + l.top + (j + 0.5) * l.row };
    }, j);
    await page.mouse.click(box.x, box.y);
    assert.deepEqual(await page.evaluate(() => document.getElementById('lines').focused), { side: 'key', index: j });
    assert.equal(await page.evaluate(() => document.getElementById('lines').query), -1);
    assert.equal(await page.evaluate(() => document.getElementById('lines').getAttribute('key')), '1');
    const column = Array.from({ length: n }, (_, i) => weight(0, i, j));
    const { lines } = await svgLines(page, 'lines');
    assert.deepEqual(lines.map((l) => l.query), column.map((w, i) => (w >= THRESHOLD ? i : -1)).filter((i) => i >= 0));
    for (const l of lines) assert.ok(l.key === j && Math.abs(l.weight - column[l.query]) < 1e-5);
    const { boxes } = await readCanvas(page, 'lines', '--attn-accent');
    boxes.forEach((b, i) => assert.ok(Math.abs(b - column[i]) <= 2 / 160, `box ${i}: drawn ${b}, want ${column[i]}`));
    assert.match(await page.locator('#lines').locator('[aria-live]').textContent(), /^“cat” \(key 2 of 11\) is looked at most by “/);
    const events = await changes(page);
    assert.deepEqual(events.filter((e) => e.name === 'key').at(-1), { name: 'key', value: 1, user: true });
    await page.mouse.click(box.x, box.y);
    assert.equal(await page.evaluate(() => document.getElementById('lines').focused), null);
  });

  it('keyboard: ↑/↓ move, ←/→ switch side, Home/End, Escape clears', async () => {
    const plot = page.locator('#lines').locator('.plot');
    await page.mouse.move(0, 0);
    await plot.focus();
    const focused = () => page.evaluate(() => document.getElementById('lines').focused);
    await page.keyboard.press('ArrowDown');
    assert.deepEqual(await focused(), { side: 'query', index: 0 });
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.deepEqual(await focused(), { side: 'query', index: 2 });
    await page.keyboard.press('ArrowRight');
    assert.deepEqual(await focused(), { side: 'key', index: 2 });
    await page.keyboard.press('End');
    assert.deepEqual(await focused(), { side: 'key', index: n - 1 });
    await page.keyboard.press('ArrowLeft');
    assert.deepEqual(await focused(), { side: 'query', index: n - 1 });
    await page.keyboard.press('Home');
    assert.deepEqual(await focused(), { side: 'query', index: 0 });
    assert.match(await page.locator('#lines').locator('[aria-live]').textContent(), /^“The” \(token 1 of 11\) looks most at/);
    // The focus ring is visible on the plot.
    const outline = await plot.evaluate((el) => getComputedStyle(el).outlineStyle);
    assert.equal(outline, 'solid');
    await page.keyboard.press('Escape');
    assert.equal(await focused(), null);
    assert.equal(await page.evaluate(() => document.getElementById('lines').hasAttribute('key')), false);
  });

  it('several heads at once, each in its own colour, with a legend that toggles them', async () => {
    await page.evaluate(async () => { const el = document.getElementById('multi'); el.query = 3; await el.updateComplete; });
    const { lines } = await svgLines(page, 'multi');
    for (const head of [0, 2]) {
      const got = lines.filter((l) => l.head === head);
      const want = Array.from({ length: n }, (_, j) => weight(head, 3, j)).map((w, j) => [w, j]).filter(([w]) => w >= THRESHOLD);
      assert.deepEqual(got.map((l) => l.key), want.map(([, j]) => j), `head ${head} keys`);
      got.forEach((l) => assert.ok(Math.abs(l.weight - weight(head, 3, l.key)) < 1e-5));
    }
    assert.equal(lines.filter((l) => l.head === 1).length, 0);
    const legend = await page.locator('#multi').locator('.legend button').evaluateAll((bs) =>
      bs.map((b) => [b.textContent, b.getAttribute('aria-pressed'), getComputedStyle(b.querySelector('.swatch')).backgroundColor]));
    assert.deepEqual(legend.map(([t, p]) => [t, p]), [['Head 1', 'true'], ['Head 2', 'false'], ['Head 3', 'true']]);
    assert.notEqual(legend[0][2], legend[2][2], 'distinct colours');
    await page.locator('#multi').locator('.legend button', { hasText: 'Head 2' }).click();
    assert.equal(await page.evaluate(() => document.getElementById('multi').getAttribute('heads')), '0 1 2');
    assert.deepEqual(await page.evaluate(() => document.getElementById('multi').selectedHeads), [0, 1, 2]);
    const live = await page.evaluate(() => document.getElementById('multi').describe());
    assert.match(live, /^“on” \(token 4 of 11\): Head 1 looks most at .*; Head 2 looks most at .*; Head 3 looks most at /);
    // heads="all" draws every head.
    await page.evaluate(async () => { const el = document.getElementById('multi'); el.setAttribute('heads', 'all'); await el.updateComplete; });
    const all = await svgLines(page, 'multi');
    assert.deepEqual([...new Set(all.lines.map((l) => l.head))], [0, 1, 2]);
  });

  it('the threshold attribute hides weaker lines; bad attributes give an error event and the figure stays', async () => {
    await page.evaluate(async () => { const el = document.getElementById('lines'); el.setAttribute('threshold', '0.2'); el.query = 5; await el.updateComplete; });
    const { lines } = await svgLines(page, 'lines');
    assert.deepEqual(lines.map((l) => l.key), Array.from({ length: n }, (_, j) => j).filter((j) => weight(0, 5, j) >= 0.2));
    const errors = await page.evaluate(() => {
      const el = document.getElementById('lines'), got = [];
      el.addEventListener('error', (e) => got.push(e.detail.message));
      el.setAttribute('threshold', '2');
      el.setAttribute('heads', 'two');
      try { el.threshold = -1; } catch (e) { got.push(`${e.name}: ${e.message}`); }
      return got;
    });
    assert.match(errors[0], /threshold must be a number from 0/);
    assert.match(errors[1], /heads must be "all" or head indices/);
    assert.match(errors[2], /^RangeError: threshold/);
    assert.equal(await page.evaluate(() => document.getElementById('lines').error), null);
    await page.evaluate(async () => {
      const el = document.getElementById('lines');
      el.removeAttribute('threshold'); el.removeAttribute('heads'); el.query = -1;
      await el.updateComplete;
    });
  });

  it('exports SVG with the tokens as text, never markup, and a PNG', async () => {
    const tricky = { tokens: ['<b>x</b>', 'a&b', '"q"', 'ok'], attention: [[0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25], [0, 0, 1, 0], [0.5, 0, 0, 0.5]] };
    assert.equal(await setData(page, 'big', tricky), true);
    const { texts, scripts, lines } = await svgLines(page, 'big');
    for (const t of tricky.tokens) assert.ok(texts.includes(t), `token ${t}`);
    assert.equal(scripts, 0);
    assert.equal(lines.length, tricky.attention.flat().filter((w) => w >= THRESHOLD).length);
    // The PNG decoded, with token 1 focused: the box beside each key is as opaque as the weight
    // token 1 gives it (the head's colour over the background).
    await page.evaluate(async () => { const el = document.getElementById('big'); el.query = 0; await el.updateComplete; });
    const png = await readPNG(page, 'big', { opacity: true, left: true });
    assert.deepEqual([png.width, png.height], [Math.round(png.svgWidth * 2), Math.round(png.svgHeight * 2)]);
    assertClose(png.cells.map((c) => c.weight), tricky.attention[0], 1e-6, 'the boxes\' data-weight');
    assertClose(png.cells.map((c) => c.value), tricky.attention[0], 1.5 / 255 / 0.5, 'the boxes\' opacity in the PNG');
    await page.evaluate(async () => { const el = document.getElementById('big'); el.query = -1; await el.updateComplete; });
    assertClean(page, browser);
  });

  it('cross-attention: queries on the left, keys on the right, nQ ≠ nK; hiding a key only', async () => {
    const queryTokens = ['le', 'chat', 'dort'], keyTokens = ['the', 'cat', 'sleeps', '.'];
    const attention = [[0.7, 0.1, 0.1, 0.1], [0.05, 0.85, 0.05, 0.05], [0.02, 0.08, 0.6, 0.3]];
    assert.equal(await setData(page, 'big', { queryTokens, keyTokens, attention }), true);
    const read = (focus) => page.evaluate(async (focus) => {
      const el = document.getElementById('big');
      el.removeAttribute('heads');
      if (focus.side === 'query') el.query = focus.index; else el.key = focus.index;
      await el.updateComplete;
      const doc = new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml');
      return { layout: el.layout, live: el.describe(), lines: [...doc.querySelectorAll('path[data-query]')].map((p) => [+p.dataset.query, +p.dataset.key, +p.dataset.weight]) };
    }, focus);
    const row = await read({ side: 'query', index: 1 });
    assert.deepEqual([row.layout.nQ, row.layout.nK], [3, 4]);
    assertClose(row.lines.map((l) => l[2]), attention[1], 1e-6, 'row of “chat”');
    assert.deepEqual(row.lines.map((l) => l[1]), [0, 1, 2, 3]);
    assert.equal(row.live, '“chat” (token 2 of 3) looks most at “cat” 0.85, “the” 0.05 and “sleeps” 0.05.');
    const column = await read({ side: 'key', index: 3 });
    assertClose(column.lines.map((l) => l[2]), attention.map((r) => r[3]), 1e-6, 'column of “.”');
    assert.equal(column.live, '“.” (key 4 of 4) is looked at most by “dort” 0.30, “le” 0.10 and “chat” 0.05.');
    const hidden = await page.evaluate(async () => {
      const el = document.getElementById('big');
      el.key = -1;
      el.hide = '.';
      el.renormalize = true;
      el.query = 2;
      await el.updateComplete;
      return { keys: el.result.keyTokens, queries: el.result.queryTokens, note: el.shadowRoot.querySelector('.hidden-note').textContent, row: Array.from(el.weights.subarray(2 * 3, 3 * 3)) };
    });
    assert.deepEqual(hidden.keys, ['the', 'cat', 'sleeps']);
    assert.deepEqual(hidden.queries, queryTokens);
    assert.equal(hidden.note, '1 token hidden; rows renormalised to sum to 1');
    assertClose(hidden.row, [0.02 / 0.7, 0.08 / 0.7, 0.6 / 0.7], 1e-6, 'renormalised row without “.”');
    await page.evaluate(() => { const el = document.getElementById('big'); el.hide = null; el.renormalize = false; el.query = -1; });
  });

  it('head="mean" and head="max" draw the element-wise mean / max over the heads (float64 here)', async () => {
    for (const mode of ['mean', 'max']) {
      const lines = await page.evaluate(async (mode) => {
        const el = document.getElementById('lines');
        el.head = mode;
        el.query = 4;
        await el.updateComplete;
        const doc = new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml');
        return { legend: el.shadowRoot.querySelector('.legend').textContent, lines: [...doc.querySelectorAll('path[data-query]')].map((p) => [+p.dataset.key, +p.dataset.weight]) };
      }, mode);
      const want = Array.from({ length: n }, (_, j) => {
        const ws = [0, 1, 2].map((h) => weight(h, 4, j));
        return mode === 'mean' ? ws.reduce((a, b) => a + b) / 3 : Math.max(...ws);
      });
      assert.deepEqual(lines.lines.map(([j]) => j), want.map((w, j) => (w >= THRESHOLD ? j : -1)).filter((j) => j >= 0), mode);
      for (const [j, w] of lines.lines) assert.ok(Math.abs(w - want[j]) < 1e-5, `${mode} key ${j}`);
      assert.match(lines.legend, mode === 'max' ? /Max over the heads.*do not add up to 1/ : /Mean of the heads.*add up to 1/);
    }
    await page.evaluate(async () => { const el = document.getElementById('lines'); el.head = 0; el.query = -1; await el.updateComplete; });
  });

  it('512 tokens × 12 heads: every head at once, lines above the threshold only; redraw timings', async (t) => {
    const N = 512, H = 12;
    const stats = await page.evaluate(async ([N, H, threshold]) => {
      // Peaked rows as trained heads have: each query looks mostly at a few keys (seeded LCG).
      const flat = new Float32Array(H * N * N);
      let seed = 7;
      const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
      for (let h = 0; h < H; h++)
        for (let i = 0; i < N; i++) {
          const row = flat.subarray((h * N + i) * N, (h * N + i + 1) * N);
          let sum = 0;
          for (let j = 0; j < N; j++) sum += (row[j] = (Math.abs(i - j - h) < 2 ? 40 : 0) + (rnd() < 0.03 ? 8 * rnd() : 0.1 * rnd()));
          for (let j = 0; j < N; j++) row[j] /= sum;
        }
      let above = 0;
      for (const w of flat) if (w >= threshold) above++;
      const el = document.getElementById('big');
      el.setAttribute('heads', 'all');
      el.data = { tokens: Array.from({ length: N }, (_, i) => `t${i}`), heads: H, attention: flat };
      await el.updateComplete;
      const all = { ...el.renderStats };
      const plot = el.shadowRoot.querySelector('.plot');
      plot.focus();
      const times = [];
      for (let s = 0; s < 40; s++) {
        plot.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
        times.push(el.renderStats.paintMs);
      }
      plot.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
      const unfocused = el.renderStats.paintMs;
      times.sort((a, b) => a - b);
      return { above, all, median: times[20], max: times.at(-1), unfocused, focused: el.focused, heads: el.selectedHeads.length, layout: el.layout };
    }, [N, H, THRESHOLD]);
    const { above } = stats;
    assert.equal(stats.heads, H);
    assert.equal(stats.all.lines, above, 'lines drawn = weights ≥ threshold, counted here');
    assert.ok(stats.all.strokes <= H * 32, `strokes batched per head and opacity bucket (${stats.all.strokes})`);
    assert.equal(stats.focused, null);
    assert.ok(stats.layout.height <= 1210, `the plot stays on screen (${stats.layout.height} px)`);
    t.diagnostic(`512×512×12: every line (${above}) drawn in ${stats.all.allMs.toFixed(1)} ms; focused redraw median ${stats.median.toFixed(2)} ms, max ${stats.max.toFixed(2)} ms; unfocused redraw ${stats.unfocused.toFixed(2)} ms`);
    assertClean(page, browser);
  });
});

describe('<attn-lines> on a 360 px touch screen', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 360, height: 740 }, contextOptions: { hasTouch: true } });
    page = await browser.fixture('<attn-lines id="lines" heads="all"></attn-lines>');
    const long = [...SENTENCE.slice(0, -1), 'Supercalifragilisticexpialidocious'];
    assert.equal(await setData(page, 'lines', { ...DATA, tokens: long }), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('fits the screen; long tokens are cut with an ellipsis; a tap focuses a token', async () => {
    const size = await page.evaluate(() => {
      const el = document.getElementById('lines');
      return { width: el.getBoundingClientRect().width, scroll: document.documentElement.scrollWidth, layout: el.layout };
    });
    assert.ok(size.scroll <= 360, `no horizontal scrolling (${size.scroll} px)`);
    assert.ok(size.layout.width <= size.width, `the plot fits the figure (${size.layout.width} ≤ ${size.width})`);
    assert.ok(size.layout.label <= 120);
    const { texts } = await svgLines(page, 'lines');
    assert.ok(texts.includes('Supercalifragil…'), 'the long token is cut in the SVG');
    const at = await page.evaluate(() => {
      const el = document.getElementById('lines'), l = el.layout, r = el.shadowRoot.querySelector('.plot canvas').getBoundingClientRect();
      return { x: r.left + l.label / 2, y: r.top + l.top + 4.5 * l.row };
    });
    await page.touchscreen.tap(at.x, at.y);
    assert.deepEqual(await page.evaluate(() => document.getElementById('lines').focused), { side: 'query', index: 4 });
    assertClean(page, browser);
  });
});
