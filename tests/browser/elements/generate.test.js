// <attn-generate> with the bundled stories260K: what it draws (text tint, bars, candidates,
// heatmap) equals what lm.run and lm.generate return when called in the same page with the same
// options; playback, stepping by buttons and keys, sampling options, themes, 360 px and export.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { expectProblems, startBrowser } from '../support.js';
import { assertClean, assertClose, changes, parseSVG, readHeatmap, readPNG, recordChanges } from './helpers.js';

// One 8-bit colour step on the light or dark ramp, with margin: how exactly a drawn pixel reads back.
const PIXEL = 1.5 / 255 / 0.7;

const PROMPT = 'Lily had a red ball. She';

// The engine's run and generate for the element's options, as plain arrays.
const engine = (page, prompt, options) => page.evaluate(async ([prompt, options]) => {
  const { init } = await import('/attnlens.js');
  const lm = await (await init()).loadModel('stories260K');
  const run = lm.run(prompt), g = lm.generate(prompt, options);
  return {
    run: { ids: [...run.ids], tokens: run.tokens, layers: run.layers.map((l) => [...l.attention]) },
    ids: [...g.ids], text: g.text, tokens: g.tokens,
    steps: g.steps.map((s) => ({ id: s.id, token: s.token, position: s.position,
      attention: s.attention.map((a) => [...a]), candidates: s.candidates })),
  };
}, [prompt, options]);

// The row a step's token was written from, for one head or the mean of the heads.
function row(step, layer, head, heads) {
  const n = step.position + 1, a = step.attention[layer];
  const pick = head === 'mean' ? [...Array(heads).keys()] : [head];
  return Array.from({ length: n }, (_, j) => pick.reduce((s, h) => s + a[h * n + j], 0) / pick.length);
}

// What the figure shows now, read from its DOM.
const drawn = (page, id = 'g') => page.evaluate((id) => {
  const el = document.getElementById(id), root = el.shadowRoot;
  const spans = [...root.querySelectorAll('.text span')];
  return {
    current: el.current, playing: el.playing,
    texts: spans.map((s) => s.textContent),
    newest: spans.findIndex((s) => s.classList.contains('new')),
    tint: spans.filter((s) => s.dataset.weight !== undefined).map((s) => Number(s.dataset.weight)),
    candidates: [...root.querySelectorAll('.candidates li[data-id]')].map((li) => ({ id: Number(li.dataset.id), p: Number(li.dataset.value), chosen: li.classList.contains('chosen') })),
    looks: [...root.querySelectorAll('.looks li[data-index]')].map((li) => ({ index: Number(li.dataset.index), value: Number(li.dataset.value) })),
    live: root.querySelector('[aria-live]').textContent,
    progress: root.querySelector('.progress').textContent,
  };
}, id);

const ready = (page, id = 'g') => page.evaluate(async (id) => {
  await customElements.whenDefined('attn-generate');
  return document.getElementById(id).updateComplete;
}, id);

const setCurrent = (page, k) => page.evaluate((k) => { document.getElementById('g').current = k; }, k);

describe('<attn-generate>', () => {
  let browser, page, want;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture(`<attn-generate id="g" prompt="${PROMPT}" steps="12" temperature="0"></attn-generate>`);
    assert.equal(await ready(page), true);
    want = await engine(page, PROMPT, { steps: 12, temperature: 0 });
    await recordChanges(page, 'g');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('generates what lm.generate returns and starts at the prompt', async () => {
    const g = await page.evaluate(() => { const g = document.getElementById('g').generation; return { ids: [...g.ids], text: g.text }; });
    assert.deepEqual(g, { ids: want.ids, text: want.text });
    assert.equal(want.ids.length, 12);
    const d = await drawn(page);
    assert.equal(d.current, -1);
    assert.deepEqual(d.texts, want.run.tokens);
    assert.equal(d.newest, -1);
    assert.equal(d.progress, '0 / 12');
    assertClean(page, browser);
  });

  it('each step shows the token, where it looked (text tint and bars) and the candidates, as generated', async () => {
    const P = want.run.ids.length;
    for (let k = 0; k < want.steps.length; k++) {
      await setCurrent(page, k);
      const d = await drawn(page), step = want.steps[k];
      assert.equal(step.position, P - 1 + k);
      assert.deepEqual(d.texts, [...want.run.tokens, ...want.tokens.slice(0, k + 1)]);
      assert.equal(d.newest, P + k);
      const looked = row(step, 0, 'mean', 8);
      assertClose(d.tint, looked, 1e-6, `step ${k} tint`);
      assert.deepEqual(d.candidates.map((c) => c.id), step.candidates.map((c) => c.id));
      assertClose(d.candidates.map((c) => c.p), step.candidates.map((c) => c.p), 1e-9, `step ${k} candidates`);
      assert.deepEqual(d.candidates.filter((c) => c.chosen).map((c) => c.id), [step.id]);
      // Greedy: the chosen token is the most likely candidate.
      assert.equal(step.candidates[0].id, step.id);
      const top = looked.indexOf(Math.max(...looked));
      assert.equal(d.looks[0].index, top);
      assert.ok(Math.abs(d.looks[0].value - looked[top]) < 1e-6);
    }
    assertClean(page, browser);
  });

  it('the heatmap fills in row by row: prompt rows from lm.run, then one generated row per step', async () => {
    const P = want.run.ids.length, size = P - 1 + want.steps.length;
    const meanRun = (i, j) => [...Array(8).keys()].reduce((s, h) => s + want.run.layers[0][(h * P + i) * P + j], 0) / 8;
    for (const k of [-1, 3, want.steps.length - 1]) {
      await setCurrent(page, k);
      const { n, values } = await readHeatmap(page, 'g');
      assert.equal(n, size);
      const filled = P + k;
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) {
          const got = values[i * n + j];
          if (i >= filled) assert.ok(got !== null && got < -0.02, `row ${i} is not written yet at step ${k}: ${got}`);
          else if (j > i) assert.equal(got, null, `(${i}, ${j}) is hatched (causal mask)`);
          else {
            const w = i < P - 1 ? meanRun(i, j) : row(want.steps[i - (P - 1)], 0, 'mean', 8)[j];
            assert.ok(Math.abs(got - w) < 0.02, `(${i}, ${j}) at step ${k}: drawn ${got}, weight ${w}`);
          }
        }
    }
  });

  it('one head instead of the mean: the head picker, reflected and announced by change', async () => {
    await setCurrent(page, 5);
    await page.locator('#g').locator('select[aria-label="Head"]').selectOption('3');
    const d = await drawn(page);
    assertClose(d.tint, row(want.steps[5], 0, 3, 8), 1e-6, 'head 4 tint');
    assert.equal(await page.evaluate(() => document.getElementById('g').getAttribute('head')), '3');
    await page.locator('#g').locator('select[aria-label="Layer"]').selectOption('4');
    assertClose((await drawn(page)).tint, row(want.steps[5], 4, 3, 8), 1e-6, 'layer 5, head 4 tint');
    const c = await changes(page);
    assert.deepEqual(c.slice(-2), [{ name: 'head', value: 3, user: true }, { name: 'layer', value: 4, user: true }]);
    await page.evaluate(() => { const el = document.getElementById('g'); el.head = 'mean'; el.layer = 0; });
    assertClose((await drawn(page)).tint, row(want.steps[5], 0, 'mean', 8), 1e-6, 'back to the mean');
  });

  it('steps back and forward with the buttons and the keyboard; the live region reads the new token', async () => {
    await setCurrent(page, -1);
    await page.evaluate(() => { window.__changes = []; });
    const fig = page.locator('#g');
    await fig.locator('button.forward').click();
    assert.equal((await drawn(page)).current, 0);
    await fig.locator('button.forward').click();
    await fig.locator('button.back').click();
    let d = await drawn(page);
    assert.equal(d.current, 0);
    const label = (t) => t.replace(/^ /, '');
    assert.match(d.live, new RegExp(`Token 1 of 12: “${label(want.tokens[0]).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}”.*looked most at “`));
    await fig.locator('.text').focus();
    for (const key of ['ArrowRight', 'ArrowRight', 'ArrowRight']) await page.keyboard.press(key);
    assert.equal((await drawn(page)).current, 3);
    await page.keyboard.press('ArrowLeft');
    assert.equal((await drawn(page)).current, 2);
    await page.keyboard.press('End');
    assert.equal((await drawn(page)).current, 11);
    await page.keyboard.press('ArrowRight');
    assert.equal((await drawn(page)).current, 11, 'stays at the last step');
    await page.keyboard.press('Home');
    d = await drawn(page);
    assert.equal(d.current, -1);
    assert.match(d.live, /prompt/);
    const c = await changes(page);
    assert.deepEqual(c.map((x) => x.value), [0, 1, 0, 1, 2, 3, 2, 11, -1]);
    assert.ok(c.every((x) => x.name === 'current' && x.user));
    // The focus ring is visible on the text.
    const outline = await fig.locator('.text').evaluate((el) => getComputedStyle(el).outlineStyle);
    assert.notEqual(outline, 'none');
    assertClean(page, browser);
  });

  it('plays on a timer to the end; Space pauses and resumes', async () => {
    await setCurrent(page, -1);
    await page.locator('#g').locator('.text').focus();
    await page.keyboard.press(' ');
    assert.equal((await drawn(page)).playing, true);
    await page.waitForFunction(() => document.getElementById('g').current >= 1);
    await page.keyboard.press(' ');
    const paused = await drawn(page);
    assert.equal(paused.playing, false);
    await page.waitForTimeout(700);
    assert.equal((await drawn(page)).current, paused.current, 'paused means no more steps');
    await page.locator('#g').locator('button.play').click();
    await page.waitForFunction(() => !document.getElementById('g').playing);
    assert.equal((await drawn(page)).current, 11);
    assert.match(await page.locator('#g').locator('button.play').getAttribute('aria-label'), /Play/);
  });

  it('exports SVG with the text as text, and PNG', async (t) => {
    await setCurrent(page, 4);
    const svg = await page.evaluate(() => document.getElementById('g').toSVG());
    const parsed = await parseSVG(page, svg);
    assert.equal(parsed.ok, true);
    assert.equal(parsed.scripts, 0);
    assert.ok(parsed.texts.some((t) => t.includes('Lily')));
    assert.match(parsed.title, /stories260K/);
    // The PNG, decoded: its size is the SVG's at pixel ratio 2, and the tint behind each token
    // (read below the glyphs) is the colour of the weight step 5 gave that token.
    const png = await readPNG(page, 'g', { at: 'bottom' });
    assert.deepEqual([png.width, png.height], [Math.round(png.svgWidth * 2), Math.round(png.svgHeight * 2)]);
    const looked = row(want.steps[4], 0, 'mean', 8);
    assert.equal(png.cells.length, looked.length, 'one tint per token read');
    t.diagnostic(`PNG tints: largest |pixel − weight| ${Math.max(...png.cells.map((c, j) => Math.abs(c.value - looked[j]))).toExponential(2)} (tolerance ${PIXEL.toExponential(2)})`);
    png.cells.forEach((c, j) => {
      assert.ok(Math.abs(c.weight - looked[j]) <= 0.005, `token ${j}: data-weight ${c.weight} (2 decimals), weight ${looked[j]}`);
      assert.ok(c.off <= 3 && Math.abs(c.value - looked[j]) <= PIXEL, `token ${j}: pixel reads ${c.value} (off the ramp by ${c.off}), weight ${looked[j]}`);
    });
  });
});

describe('<attn-generate> options, errors, themes and small screens', () => {
  let browser;
  before(async () => { browser = await startBrowser({ colorScheme: 'dark', viewport: { width: 360, height: 800 } }); });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('seeded sampling: the same seed writes what lm.generate writes, another seed something else', async () => {
    const page = await browser.fixture('<attn-generate id="g" prompt="Once upon a time" steps="24" temperature="1" top-p="0.95" seed="7"></attn-generate>');
    assert.equal(await ready(page), true);
    const want = await engine(page, 'Once upon a time', { steps: 24, temperature: 1, topP: 0.95, seed: 7 });
    const text = () => page.evaluate(() => document.getElementById('g').generation.text);
    assert.equal(await text(), want.text);
    await page.evaluate(() => { document.getElementById('g').seed = 8; });
    assert.equal(await ready(page), true);
    const other = await text();
    assert.notEqual(other, want.text);
    await page.evaluate(() => { document.getElementById('g').seed = 7; });
    await ready(page);
    assert.equal(await text(), want.text);
    assertClean(page, browser);
  });

  it('dark theme at 360 px: nothing overflows, the heatmap draws in the dark colours', async (t) => {
    const page = await browser.fixture('<attn-generate id="g" prompt="The cat" steps="16" temperature="0"></attn-generate>');
    assert.equal(await ready(page), true);
    await setCurrent(page, 15);
    const box = await page.evaluate(() => {
      const el = document.getElementById('g');
      return { width: el.getBoundingClientRect().width, scroll: el.shadowRoot.querySelector('.frame').scrollWidth,
        bg: getComputedStyle(el).getPropertyValue('--attn-bg').trim(), page: document.documentElement.scrollWidth };
    });
    assert.equal(box.bg, '#16181c');
    assert.ok(box.scroll <= box.width + 1, `content ${box.scroll} px in ${box.width} px`);
    assert.ok(box.page <= 360, `page ${box.page} px wide`);
    const { n, values } = await readHeatmap(page, 'g');
    // Every row of the matrix drawn is a softmax row (the mean of 8 heads' rows, nothing hidden):
    // it adds up to 1 to float32 rounding; below the diagonal each cell reads back as its weight.
    const rows = await page.evaluate(() => {
      const g = document.getElementById('g').generation, run = document.getElementById('g').promptRun, P = run.ids.length;
      // a: [8 heads][rows][len]; row i of each head starts at (h·rows + i)·len.
      const mean = (a, rows, len, i, at) => Array.from({ length: i + 1 }, (_, j) => {
        let s = 0;
        for (let h = 0; h < 8; h++) s += a[(h * rows + at) * len + j];
        return s / 8;
      });
      return [...Array.from({ length: P - 1 }, (_, i) => mean(run.layers[0].attention, P, P, i, i)),
        ...g.steps.map((s) => mean(s.attention[0], 1, s.position + 1, s.position, 0))];
    });
    assert.equal(rows.length, n);
    let worst = 0;
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) worst = Math.max(worst, Math.abs(values[i * n + j] - rows[i][j]));
    t.diagnostic(`heatmap: largest |pixel − weight| ${worst.toExponential(2)} (tolerance ${PIXEL.toExponential(2)}); largest |row sum − 1| ${Math.max(...rows.map((r) => Math.abs(r.reduce((a, b) => a + b, 0) - 1))).toExponential(2)}`);
    for (let i = 0; i < n; i++) {
      const sum = rows[i].reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} of the weights sums to ${sum}`);
      for (let j = 0; j <= i; j++) {
        const got = values[i * n + j];
        assert.ok(got !== null && Math.abs(got - rows[i][j]) <= PIXEL, `(${i}, ${j}): drawn ${got}, weight ${rows[i][j]}`);
      }
    }
    assertClean(page, browser);
  });

  it('bad options show a clear error and the figure recovers', async () => {
    const page = await browser.fixture('<attn-generate id="g" steps="0"></attn-generate>');
    const result = await page.evaluate(async () => {
      const el = document.getElementById('g');
      const messages = [];
      el.addEventListener('error', (e) => messages.push(e.detail.message));
      await customElements.whenDefined('attn-generate');
      el.setAttribute('steps', 'many');
      const shown = el.shadowRoot.querySelector('.error').textContent;
      let thrown = null;
      try { el.topP = 2; } catch (e) { thrown = `${e.name}: ${e.message}`; }
      el.setAttribute('steps', '3');
      el.setAttribute('temperature', '0');
      const ok = await el.updateComplete;
      return { messages, shown, thrown, ok, ids: el.generation?.ids.length };
    });
    assert.match(result.shown, /steps must be a whole number/);
    assert.match(result.thrown, /^RangeError: top-p must be a number in \(0, 1\]/);
    assert.equal(result.ok, true);
    assert.equal(result.ids, 3);
    // Error states and a thrown RangeError, not console errors: afterEach checks the console.
  });

  it('autoplay writes on its own, unless the reader prefers reduced motion', async () => {
    const page = await browser.fixture('<attn-generate id="g" prompt="Tom" steps="3" temperature="0" autoplay></attn-generate>');
    await ready(page);
    await page.waitForFunction(() => document.getElementById('g').current === 2);
    await page.emulateMedia({ reducedMotion: 'reduce' });
    const still = await page.evaluate(async () => {
      const el = document.createElement('attn-generate');
      for (const [k, v] of Object.entries({ id: 'still', prompt: 'Tom', steps: '3', temperature: '0', autoplay: '' })) el.setAttribute(k, v);
      // Autoplay would start right after the generate event: read the state then, and later.
      const atGenerate = new Promise((resolve) => el.addEventListener('generate', () => queueMicrotask(() => resolve(el.playing))));
      document.body.append(el);
      await el.updateComplete;
      const playing = await atGenerate;
      await new Promise((r) => setTimeout(r, 1200));  // over two timer periods (450 ms): nothing moved
      return { playing, current: el.current };
    });
    assert.deepEqual(still, { playing: false, current: -1 });
  });
});

describe('<attn-generate> API: languageModel, the generate event, play/pause/step methods', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser();
    // model names nothing loadable: only a languageModel given as an object can make it write.
    page = await browser.fixture('<attn-generate id="g" model="no-such-model" prompt="Tom" steps="5" temperature="0"></attn-generate>');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('languageModel: an lm object is used instead of model; the generate event carries its result', async () => {
    // First the figure tries model="no-such-model": a 404 (and Chromium's console line for it), and
    // an error state naming the file.
    const first = await expectProblems(page, [/^HTTP 404: .*\/no-such-model$/, /^console error: Failed to load resource: .*404/], () => page.evaluate(async () => {
      await customElements.whenDefined('attn-generate');
      const el = document.getElementById('g');
      return { ok: await el.updateComplete, error: el.error };
    }));
    assert.equal(first.ok, false);
    assert.match(first.error, /cannot fetch the model file .*no-such-model: HTTP 404/);
    const r = await page.evaluate(async () => {
      const el = document.getElementById('g');
      let refused = null;
      try { el.languageModel = { run() {} }; } catch (e) { refused = `${e.name}: ${e.message}`; }
      const { init } = await import('/attnlens.js');
      const lm = await (await init()).loadModel('stories260K');
      // The same model seen through a proxy that records the figure's calls of run and generate.
      const calls = [];
      const own = new Proxy(lm, {
        get(target, key) {
          const value = target[key];
          if (typeof value !== 'function') return value;
          return (...args) => { if (key === 'run' || key === 'generate') calls.push(key); return value.apply(target, args); };
        },
      });
      const events = [];
      el.addEventListener('generate', (e) => events.push(e.detail));
      el.languageModel = own;
      const ok = await el.updateComplete;
      const direct = lm.generate('Tom', { steps: 5, temperature: 0 });
      return {
        refused, ok, error: el.error, same: el.languageModel === own, calls, events: events.length,
        detailIsShown: events[0]?.generation === el.generation && events[0]?.run === el.promptRun,
        ids: [...el.generation.ids], want: [...direct.ids], text: el.generation.text, wantText: direct.text,
        promptIds: [...el.promptRun.ids], wantPrompt: [...lm.run('Tom').ids],
      };
    });
    assert.match(r.refused, /^TypeError: languageModel must be a language model/);
    assert.equal(r.ok, true, r.error);
    assert.equal(r.same, true);
    assert.deepEqual(r.calls, ['run', 'generate']);
    assert.equal(r.events, 1, 'one generate event per generation');
    assert.equal(r.detailIsShown, true, 'detail: { generation, run } is what the figure shows');
    assert.deepEqual([r.ids, r.text, r.promptIds], [r.want, r.wantText, r.wantPrompt]);
    assert.equal(r.ids.length, 5);
  });

  it('stepForward(), stepBack(), play() and pause() move through the steps; change events say user: false', async () => {
    const r = await page.evaluate(async () => {
      const el = document.getElementById('g'), log = [];
      el.addEventListener('change', (e) => log.push([e.detail.name, e.detail.value, e.detail.user]));
      el.current = -1;
      const seen = [];
      el.stepForward(); seen.push(el.current);
      el.stepForward(); seen.push(el.current);
      el.stepBack(); seen.push(el.current);
      el.stepBack(); el.stepBack(); seen.push(el.current);  // stops at the prompt
      el.current = 4;
      el.stepForward(); seen.push(el.current);              // stops at the last step
      return { seen, log };
    });
    assert.deepEqual(r.seen, [0, 1, 0, -1, 4]);
    assert.deepEqual(r.log, [['current', 0, false], ['current', 1, false], ['current', 0, false], ['current', -1, false], ['current', 4, false]]);
    // play() from the end starts over at the prompt and plays to the end, then stops by itself.
    const started = await page.evaluate(() => {
      const el = document.getElementById('g');
      el.play();
      return { playing: el.playing, current: el.current, pressed: el.shadowRoot.querySelector('button.play').getAttribute('aria-pressed') };
    });
    assert.deepEqual(started, { playing: true, current: -1, pressed: 'true' });
    await page.waitForFunction(() => document.getElementById('g').current >= 1);
    const paused = await page.evaluate(() => { const el = document.getElementById('g'); el.pause(); return { playing: el.playing, current: el.current }; });
    assert.equal(paused.playing, false);
    await page.waitForTimeout(1000);  // over two timer periods (450 ms): paused means no more steps
    assert.equal(await page.evaluate(() => document.getElementById('g').current), paused.current);
    await page.evaluate(() => document.getElementById('g').play());
    await page.waitForFunction(() => !document.getElementById('g').playing);
    assert.equal(await page.evaluate(() => document.getElementById('g').current), 4);
  });
});

describe('model="stories260K" in the other figures', () => {
  let browser;
  before(async () => { browser = await startBrowser(); });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('the heatmap and the bars show its causal attention, with readable piece labels', async () => {
    const text = 'Lily and Ben went to the park.\nThey  ran.';
    const page = await browser.fixture(`<attn-heatmap id="map" model="stories260K" text="${text}" layer="2" head="5"></attn-heatmap>
      <attn-bars id="bars" model="stories260K" text="${text}" layer="4" head="1" query="Lily"></attn-bars>`);
    const got = await page.evaluate(async (text) => {
      await customElements.whenDefined('attn-heatmap');
      await customElements.whenDefined('attn-bars');
      const map = document.getElementById('map'), bars = document.getElementById('bars');
      await map.updateComplete;
      await bars.updateComplete;
      const { init } = await import('/attnlens.js');
      const run = (await (await init()).loadModel('stories260K')).run(text);
      const n = run.ids.length;
      return { tokens: map.tokens, pieces: run.tokens, n, mask: map.mask, layers: map.layers, heads: map.heads,
        weights: [...map.weights], want: [...run.layers[2].attention.subarray(5 * n * n, 6 * n * n)],
        query: bars.query, row: [...bars.row], barsWant: [...run.layers[4].attention.subarray(n * n + bars.query * n, n * n + (bars.query + 1) * n)] };
    }, text);
    assert.equal(got.tokens[0], '<s>');
    assert.ok(got.tokens.includes('Lily'));
    assert.ok(got.tokens.includes('↵'), 'the newline piece is visible');
    assert.ok(got.tokens.every((t) => t.length > 0 && !t.startsWith(' ')), JSON.stringify(got.tokens));
    assert.equal(got.tokens.length, got.pieces.length);
    assert.deepEqual([got.layers, got.heads, got.mask], [5, 8, 'causal']);
    // The figure renormalises each row over the keys the causal mask keeps: a float32 rounding.
    assertClose(got.weights, got.want, 1e-6, 'heatmap weights = lm.run');
    assert.equal(got.tokens[got.query], 'Lily');
    assert.ok(got.tokens.includes('␣'), 'the lone space piece is visible');
    assertClose(got.row, got.barsWant, 1e-6, 'bars row = lm.run');
    const { n, values } = await readHeatmap(page, 'map');
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) assert.equal(values[i * n + j], null, 'the future is hatched');
    assertClean(page, browser);
  });
});
