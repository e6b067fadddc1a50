// <attn-generate> as a reader uses it: their own prompt (Unicode, emoji, a character the
// vocabulary lacks) typed into the box, Enter or Write, play/step, layer/head/mean, candidates,
// the causal heatmap row by row, the context limit and a prompt too long for it, the theme
// attribute; and model="stories260K" in the other figures with a reader's sentence. What is drawn
// is compared with lm.run/lm.generate called in the same page (strict CSP fixture).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { assertClean, assertClose, readHeatmap, readPNG } from './helpers.js';

const MINE = 'Zoë took her 🐶 to the 公园. She';
const NEAR_CONTEXT = 'Once upon a time, there was a little dog. '.repeat(40).slice(0, 1600);  // ~460 tokens

// lm.run and lm.generate in the page, as plain arrays (`light`: no run attention, and only the
// last step's, so that long prompts do not ship megabytes to the test).
const engine = (page, prompt, options, light = false) => page.evaluate(async ([prompt, options, light]) => {
  const { init } = await import('/attnlens.js');
  const lm = await (await init()).loadModel('stories260K');
  const run = lm.run(prompt), g = lm.generate(prompt, options);
  return {
    run: { ids: [...run.ids], tokens: run.tokens, layers: light ? [] : run.layers.map((l) => [...l.attention]) },
    ids: [...g.ids], text: g.text, stopped: g.stopped, seqLen: lm.config.seqLen,
    steps: g.steps.map((s, k) => ({ id: s.id, position: s.position, candidates: s.candidates,
      attention: light && k < g.steps.length - 1 ? [] : s.attention.map((a) => [...a]) })),
  };
}, [prompt, options, light]);

const row = (step, layer, head, heads = 8) => {
  const n = step.position + 1, a = step.attention[layer];
  const pick = head === 'mean' ? [...Array(heads).keys()] : [head];
  return Array.from({ length: n }, (_, j) => pick.reduce((s, h) => s + a[h * n + j], 0) / pick.length);
};

const drawn = (page, id = 'g') => page.evaluate((id) => {
  const el = document.getElementById(id), root = el.shadowRoot;
  return {
    current: el.current, error: el.error,
    texts: [...root.querySelectorAll('.text span')].map((s) => s.textContent),
    tint: [...root.querySelectorAll('.text span')].filter((s) => s.dataset.weight !== undefined).map((s) => Number(s.dataset.weight)),
    candidates: [...root.querySelectorAll('.candidates li[data-id]')].map((li) => ({ id: Number(li.dataset.id), p: Number(li.dataset.value) })),
    stopped: root.querySelector('.stopped').textContent,
    live: root.querySelector('[aria-live]').textContent,
    shownError: root.querySelector('.error').hidden ? '' : root.querySelector('.error').textContent,
  };
}, id);

const ready = (page, id = 'g') => page.evaluate(async (id) => {
  await customElements.whenDefined('attn-generate');
  return document.getElementById(id).updateComplete;
}, id);

describe('<attn-generate> with a reader\'s own prompt', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 360, height: 900 } });
    page = await browser.fixture('<attn-generate id="g" steps="6"></attn-generate>');
    assert.equal(await ready(page), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('typed into the box + Enter: writes what lm.generate writes with the figure\'s options, and shows the prompt as typed', async () => {
    const input = page.locator('#g').locator('input.prompt');
    await input.fill(MINE);
    await input.press('Enter');  // writes from the prompt, then plays
    assert.equal(await ready(page), true);
    // The figure's defaults: temperature 1, top-p 1, seed 1 (reproducible).
    const want = await engine(page, MINE, { steps: 6, temperature: 1, topP: 1, seed: 1 });
    const got = await page.evaluate(() => { const g = document.getElementById('g').generation; return { ids: [...g.ids], text: g.text }; });
    assert.deepEqual(got, { ids: want.ids, text: want.text });
    await page.waitForFunction(() => document.getElementById('g').playing);
    await page.waitForFunction(() => !document.getElementById('g').playing);
    const d = await drawn(page);
    const P = want.run.ids.length;
    assert.equal(d.current, want.steps.length - 1, 'played to the end');
    assert.equal(d.texts.length, P + want.steps.length);
    assert.equal(d.texts[0], '<s>');
    // Byte pieces of 🐶 and 公园 join into the characters: the prompt reads as typed.
    assert.equal(d.texts.slice(1, P).join(''), ` ${MINE}`);
    assert.equal(await page.evaluate(() => document.getElementById('g').prompt), MINE);
    assertClean(page, browser);
  });

  it('each step: tint, candidates and the heatmap row equal lm.generate; one head and another layer too', async () => {
    const want = await engine(page, MINE, { steps: 6, temperature: 1, topP: 1, seed: 1 });
    const P = want.run.ids.length;
    for (const k of [0, 3, want.steps.length - 1]) {
      await page.evaluate((k) => { document.getElementById('g').current = k; }, k);
      const d = await drawn(page), step = want.steps[k];
      assert.equal(step.position, P - 1 + k);
      assertClose(d.tint, row(step, 0, 'mean'), 1e-6, `step ${k} tint`);
      assert.deepEqual(d.candidates.map((c) => c.id), step.candidates.map((c) => c.id));
      assertClose(d.candidates.map((c) => c.p), step.candidates.map((c) => c.p), 1e-9, `step ${k} candidates`);
      const { n, values } = await readHeatmap(page, 'g');
      assert.equal(n, P - 1 + want.steps.length);
      const i = P - 1 + k, wantRow = row(step, 0, 'mean');
      for (let j = 0; j <= i; j++) assert.ok(Math.abs(values[i * n + j] - wantRow[j]) < 0.02, `heatmap (${i}, ${j})`);
      for (let j = i + 1; j < n; j++) assert.equal(values[i * n + j], null, 'the future is hatched');
      if (i + 1 < n) assert.ok(values[(i + 1) * n] < -0.02, 'the next row is not written yet');
    }
    await page.evaluate(() => { const el = document.getElementById('g'); el.layer = 3; el.head = 6; el.current = 2; });
    assertClose((await drawn(page)).tint, row(want.steps[2], 3, 6), 1e-6, 'layer 4, head 7');
    await page.evaluate(() => { const el = document.getElementById('g'); el.layer = 0; el.head = 'mean'; });
  });

  it('Write with a new prompt; play to the end and Space to pause; Home/End', async () => {
    const input = page.locator('#g').locator('input.prompt');
    await input.fill('The little car');
    await page.locator('#g').locator('button.write').click();
    assert.equal(await ready(page), true);
    const want = await engine(page, 'The little car', { steps: 6, temperature: 1, topP: 1, seed: 1 });
    assert.deepEqual(await page.evaluate(() => [...document.getElementById('g').generation.ids]), want.ids);
    // Write plays from the prompt; the play button pauses and resumes.
    await page.waitForFunction(() => document.getElementById('g').playing);
    await page.locator('#g').locator('button.play').click();
    assert.equal(await page.evaluate(() => document.getElementById('g').playing), false);
    await page.locator('#g').locator('button.play').click();
    await page.waitForFunction(() => !document.getElementById('g').playing);
    assert.equal((await drawn(page)).current, want.steps.length - 1);
    await page.locator('#g').locator('.text').focus();
    await page.keyboard.press('Home');
    assert.equal((await drawn(page)).current, -1);
    await page.keyboard.press(' ');
    await page.waitForFunction(() => document.getElementById('g').current >= 0);
    await page.keyboard.press(' ');
    const paused = (await drawn(page)).current;
    await page.waitForTimeout(600);
    assert.equal((await drawn(page)).current, paused);
    await page.keyboard.press('End');
    assert.equal((await drawn(page)).current, want.steps.length - 1);
    assertClean(page, browser);
  });

  it('the context limit: writes up to position 511 and says so; a prompt too long says how long, then recovers', async (t) => {
    const started = Date.now();
    await page.evaluate((p) => { const el = document.getElementById('g'); el.steps = 100; el.temperature = 0; el.prompt = p; }, NEAR_CONTEXT);
    assert.equal(await ready(page), true, (await drawn(page)).error);
    t.diagnostic(`a ${NEAR_CONTEXT.length}-character prompt written and drawn in ${Date.now() - started} ms`);
    const want = await engine(page, NEAR_CONTEXT, { steps: 100, temperature: 0 }, true);
    assert.equal(want.stopped, 'context', 'the prompt leaves fewer than 100 positions');
    const P = want.run.ids.length;
    assert.equal(want.ids.length, want.seqLen - P + 1);
    let d = await drawn(page);
    assert.match(d.stopped, /context .* is full/);
    assert.match(d.live, /context .* is full/);
    assert.deepEqual(await page.evaluate(() => [...document.getElementById('g').generation.ids]), want.ids);
    await page.evaluate(() => { document.getElementById('g').current = document.getElementById('g').generation.steps.length - 1; });
    assertClose((await drawn(page)).tint, row(want.steps.at(-1), 0, 'mean'), 1e-6, 'the last step reads all 512 positions');
    // Far too long: a message in the reader's terms, no exception escapes.
    await page.evaluate((p) => { document.getElementById('g').prompt = p + p; }, NEAR_CONTEXT);
    assert.equal(await ready(page), false);
    d = await drawn(page);
    assert.match(d.error, /the prompt is \d+ tokens long .* reads at most 512: shorten it/);
    assert.match(d.shownError, /prompt is \d+ tokens long/);
    await page.evaluate(() => { document.getElementById('g').prompt = 'Tom'; });
    assert.equal(await ready(page), true);
    assert.equal((await drawn(page)).error, null);
    // An error state, not a console error: afterEach checks the console stayed clean.
  });

  it('fits 360 px; theme="dark" on a light page draws dark; exports SVG and PNG of the reader\'s text', async () => {
    await page.evaluate((p) => { const el = document.getElementById('g'); el.prompt = p; el.steps = 8; el.setAttribute('theme', 'dark'); }, MINE);
    assert.equal(await ready(page), true);
    const box = await page.evaluate(() => {
      const el = document.getElementById('g');
      return { width: el.getBoundingClientRect().width, scroll: el.shadowRoot.querySelector('.frame').scrollWidth,
        bg: getComputedStyle(el).getPropertyValue('--attn-bg').trim(), page: document.documentElement.scrollWidth };
    });
    assert.equal(box.bg, '#16181c');
    assert.ok(box.scroll <= box.width + 1 && box.page <= 360, JSON.stringify(box));
    await page.evaluate(() => { document.getElementById('g').current = 3; });
    const svg = await page.evaluate(() => document.getElementById('g').toSVG());
    // The pieces as escaped text: a byte piece by its name.
    assert.ok(svg.includes('>Zo<') || svg.includes('>Z<'), 'the prompt\'s pieces');
    assert.ok(svg.includes('&lt;0xF0&gt;') && !/<script/i.test(svg));
    // The PNG decoded, in the dark theme: behind each piece (below its glyphs) the tint of the
    // weight step 4 gave it, on the dark ramp.
    const looked = await page.evaluate(() => [...document.getElementById('g').frame.looked]);
    const png = await readPNG(page, 'g', { at: 'bottom' });
    assert.deepEqual([png.width, png.height], [Math.round(png.svgWidth * 2), Math.round(png.svgHeight * 2)]);
    assertClose(png.cells.map((c) => c.value), looked, 1.5 / 255 / 0.7, 'PNG tints, dark theme');
    await page.evaluate(() => document.getElementById('g').setAttribute('theme', 'light'));
    assert.notEqual(await page.evaluate(() => getComputedStyle(document.getElementById('g')).getPropertyValue('--attn-bg').trim()), '#16181c');
    assertClean(page, browser);
  });
});

describe('model="stories260K" in the other figures, with a reader\'s sentence', () => {
  let browser;
  before(async () => { browser = await startBrowser(); });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('heatmap, bars, lines, heads and compare show lm.run\'s causal attention; byte pieces are labelled <0xHH>', async () => {
    const text = 'Zoë’s 🐶 ran to the 公园!';
    const page = await browser.fixture(`<attn-heatmap id="map" model="stories260K" text="${text}" layer="3" head="2"></attn-heatmap>
      <attn-bars id="bars" model="stories260K" text="${text}" layer="1" head="mean" query="the"></attn-bars>
      <attn-lines id="lines" model="stories260K" text="${text}" layer="4" head="7"></attn-lines>
      <attn-heads id="heads" model="stories260K" text="${text}" layer="2" head="4"></attn-heads>
      <attn-compare id="cmp" model="stories260K" text="${text}" head-a="0" head-b="5"></attn-compare>`);
    const got = await page.evaluate(async (text) => {
      const ids = ['map', 'bars', 'lines', 'heads', 'cmp'];
      for (const id of ids) {
        const el = document.getElementById(id);
        await customElements.whenDefined(el.localName);
        await el.updateComplete;
      }
      const { init } = await import('/attnlens.js');
      const run = (await (await init()).loadModel('stories260K')).run(text);
      const n = run.ids.length, head = (l, h) => [...run.layers[l].attention.subarray(h * n * n, (h + 1) * n * n)];
      const mean = (l) => { const m = new Array(n * n).fill(0); for (let h = 0; h < 8; h++) head(l, h).forEach((w, i) => { m[i] += w / 8; }); return m; };
      const el = (id) => document.getElementById(id);
      return {
        n, ids: [...run.ids], pieces: run.tokens,
        errors: ids.map((id) => el(id).error),
        tokens: Object.fromEntries(ids.filter((id) => id !== 'cmp').map((id) => [id, el(id).tokens])),
        map: [[...el('map').weights], head(3, 2)],
        bars: [el('bars').query, [...el('bars').row], mean(1)],
        lines: [[...el('lines').weights], head(4, 7)],
        heads: [[...el('heads').weights], head(2, 4)],
        cmp: [[...el('cmp').weightsA], head(0, 0), [...el('cmp').weightsB], head(0, 5)],
      };
    }, text);
    assert.deepEqual(got.errors, [null, null, null, null, null]);
    const byteIds = got.ids.map((id, j) => (id >= 3 && id <= 258 && got.pieces[j] === '\ufffd' ? j : -1)).filter((j) => j >= 0);
    assert.ok(byteIds.length >= 6, 'ë, 🐶, 公 and 园 fall back to bytes');
    for (const tokens of Object.values(got.tokens)) {
      assert.equal(tokens.length, got.n);
      assert.equal(tokens[0], '<s>');
      for (const j of byteIds) assert.equal(tokens[j], `<0x${(got.ids[j] - 3).toString(16).toUpperCase().padStart(2, '0')}>`);
      assert.ok(tokens.every((t) => t !== '\ufffd' && t.length > 0), JSON.stringify(tokens));
    }
    assertClose(got.map[0], got.map[1], 1e-6, 'heatmap = lm.run layer 3 head 2');
    const [q, barsRow, mean1] = got.bars;
    assert.equal(got.tokens.bars[q], 'the');
    assertClose(barsRow, mean1.slice(q * got.n, (q + 1) * got.n), 1e-6, 'bars = mean of layer 1, row "the"');
    assertClose(got.lines[0], got.lines[1], 1e-6, 'lines = lm.run layer 4 head 7');
    assertClose(got.heads[0], got.heads[1], 1e-6, 'heads figure: layer 2, head 4 selected');
    assertClose(got.cmp[0], got.cmp[1], 1e-6, 'compare A = head 0');
    assertClose(got.cmp[2], got.cmp[3], 1e-6, 'compare B = head 5');
    assertClean(page, browser);
  });
});
