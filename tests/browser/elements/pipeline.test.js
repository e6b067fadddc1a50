import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { assertClean, assertClose, changes, parseSVG, recordChanges, ref, setData, vectors } from './helpers.js';

const TOKENS = ['we', 'need', 'more', 'data', 'now'];

// The numbers each step's table shows, as the reader sees them (text of the cells).
const tables = (page) => page.evaluate(() => {
  const el = document.getElementById('pipe');
  const out = {};
  for (const fig of el.shadowRoot.querySelectorAll('figure')) {
    const rows = [...fig.querySelectorAll('tbody tr')];
    out[fig.dataset.step] = {
      rows: rows.length,
      cols: rows[0].querySelectorAll('td').length,
      text: rows.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      masked: rows.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.classList.contains('masked'))),
    };
  }
  return out;
});

const steps = (page) => page.evaluate(() => {
  const s = document.getElementById('pipe').steps;
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Array.from(v, (x) => (Number.isFinite(x) ? x : String(x)))]));
});

describe('<attn-pipeline>', () => {
  let browser, page;
  const data = vectors(TOKENS, { dK: 4, dV: 3, seed: 21, spread: 1.2 });
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-pipeline id="pipe" query="2"></attn-pipeline>');
    assert.equal(await setData(page, 'pipe', data.json), true);
    await recordChanges(page, 'pipe');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('shows the six steps as matrices of the right size, with the engine\'s numbers', async () => {
    const t = await tables(page);
    assert.deepEqual(Object.keys(t), ['scores', 'scale', 'mask', 'softmax', 'weights', 'output']);
    for (const step of ['scores', 'scale', 'mask', 'weights']) assert.deepEqual([t[step].rows, t[step].cols], [5, 5], step);
    assert.deepEqual([t.softmax.rows, t.softmax.cols], [5, 6]);  // with the row sums
    assert.deepEqual([t.output.rows, t.output.cols], [5, 3]);
    const want = ref.attention(data.q, data.k, data.v, { dK: 4, dV: 3 });
    const s = await steps(page);
    assertClose(s.scores, Array.from(want.scores), 1e-5, 'QKᵀ');
    assertClose(s.scale, Array.from(want.scores, (x) => x / 2), 1e-5, '÷√d_k');
    assertClose(s.weights, Array.from(want.weights), 1e-5, 'A');
    assertClose(s.output, Array.from(want.output), 1e-5, 'A·V');
    // The tables print what was computed (2 decimals).
    assert.equal(t.weights.text[2][1], want.weights[2 * 5 + 1].toFixed(2));
    assert.equal(t.scores.text[4][0], (Math.round(want.scores[20] * 100) / 100).toFixed(2));
    assertClean(page, browser);
  });

  it('without scaling, wide vectors saturate the softmax; ÷√d_k keeps it soft', async () => {
    const wide = vectors(TOKENS, { dK: 256, dV: 3, seed: 5 });
    await setData(page, 'pipe', wide.json);
    const maxOf = (w) => Math.max(...w.slice(2 * 5, 3 * 5));
    const scaled = (await steps(page)).weights;
    await page.locator('#pipe').locator('select[aria-label="Scale"]').selectOption('none');
    await page.evaluate(() => document.getElementById('pipe').updateComplete);
    const unscaled = (await steps(page)).weights;
    assert.equal(await page.evaluate(() => document.getElementById('pipe').scale), 'none');
    assertClose(unscaled, Array.from(ref.attention(wide.q, wide.k, wide.v, { dK: 256, dV: 3, scale: 1 }).weights), 1e-5, 'no scaling');
    assertClose(scaled, Array.from(ref.attention(wide.q, wide.k, wide.v, { dK: 256, dV: 3 }).weights), 1e-5, 'scaled');
    assert.ok(maxOf(unscaled) > maxOf(scaled), `${maxOf(unscaled)} > ${maxOf(scaled)}`);
    assert.ok(maxOf(unscaled) > 0.95, `saturated: ${maxOf(unscaled)}`);
    assert.match(await page.locator('#pipe').locator('.meter').textContent(), /saturated/);
    assert.deepEqual((await changes(page)).at(-1), { name: 'scale', value: 'none', user: true });
    await setData(page, 'pipe', data.json);
    await page.evaluate(() => { document.getElementById('pipe').scale = 'auto'; });
  });

  it('a huge scale gives one-hot rows; temperature divides the scale', async () => {
    await page.evaluate(async () => { const el = document.getElementById('pipe'); el.scale = 1e4; await el.updateComplete; });
    const w = (await steps(page)).weights;
    const { scores } = ref.attention(data.q, data.k, data.v, { dK: 4, dV: 3 });
    for (let i = 0; i < 5; i++) {
      const row = Array.from(scores.subarray(i * 5, i * 5 + 5));
      const best = row.indexOf(Math.max(...row));
      for (let j = 0; j < 5; j++) assert.ok(Math.abs(w[i * 5 + j] - (j === best ? 1 : 0)) < 1e-3, `row ${i}`);
    }
    await page.evaluate(async () => { const el = document.getElementById('pipe'); el.scale = 'auto'; el.temperature = 4; await el.updateComplete; });
    assertClose((await steps(page)).weights, Array.from(ref.attention(data.q, data.k, data.v, { dK: 4, dV: 3, scale: 0.5 / 4 }).weights), 1e-5, 'T = 4');
    assert.equal(await page.locator('#pipe').locator('input[aria-label="Temperature"]').inputValue(), '2');
    await page.evaluate(() => { document.getElementById('pipe').temperature = 1; });
  });

  it('the causal mask sets future scores to −∞ and their weights to 0, drawn hatched', async () => {
    await page.locator('#pipe').locator('select[aria-label="Mask"]').selectOption('causal');
    await page.evaluate(() => document.getElementById('pipe').updateComplete);
    const s = await steps(page), t = await tables(page);
    const want = ref.attention(data.q, data.k, data.v, { dK: 4, dV: 3, causal: true });
    for (let i = 0; i < 5; i++)
      for (let j = 0; j < 5; j++) {
        assert.equal(s.mask[i * 5 + j] === '-Infinity', j > i, `mask ${i},${j}`);
        assert.equal(t.mask.masked[i][j], j > i);
        assert.equal(t.weights.masked[i][j], j > i);
        assert.equal(t.scores.masked[i][j], false, 'scores are shown before masking');
      }
    assertClose(s.weights, Array.from(want.weights), 1e-5, 'causal weights');
    assert.equal(t.mask.text[0][4], '−∞');
    await page.evaluate(() => { document.getElementById('pipe').mask = 'none'; });
  });

  it('keys choose the step and the query; clicking a row chooses the query', async () => {
    await page.locator('#pipe').locator('[role="tab"][aria-selected="true"]').focus();
    await page.keyboard.press('Home');
    assert.equal(await page.evaluate(() => document.getElementById('pipe').step), 'scores');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.getElementById('pipe').step), 'scale');
    assert.equal(await page.getAttribute('#pipe', 'step'), 'scale');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.getElementById('pipe').query), 3);
    assert.deepEqual((await changes(page)).slice(-3).map((c) => c.name), ['step', 'step', 'query']);
    await page.locator('#pipe').locator('figure[data-step="weights"] tbody tr').nth(0).locator('td').first().click();
    assert.deepEqual(await page.evaluate(() => [document.getElementById('pipe').query, document.getElementById('pipe').step]), [0, 'weights']);
    const current = await page.locator('#pipe').locator('figure.current').getAttribute('data-step');
    assert.equal(current, 'weights');
  });

  it('exports a valid SVG with the tokens', async () => {
    const parsed = await parseSVG(page, await page.evaluate(() => document.getElementById('pipe').toSVG()));
    assert.equal(parsed.ok, true, parsed.error);
    for (const t of TOKENS) assert.ok(parsed.texts.includes(t), t);
  });

  it('precomputed weights are refused with a readable message', async () => {
    // An error state, not a console error: afterEach checks the console stayed clean.
    const ok = await setData(page, 'pipe', { tokens: ['a', 'b'], attention: [[1, 0], [0.5, 0.5]] });
    assert.equal(ok, false);
    const message = await page.locator('#pipe').locator('[role="alert"]').textContent();
    assert.match(message, /needs vectors/);
  });
});
