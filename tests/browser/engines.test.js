// Every reader's browser: the same checks in Chromium, Firefox ESR and WebKitGTK (engines.js), one
// browser session per engine and colour scheme, each page reused for many checks. Numbers are
// compared with the float64 reference (tests/js/reference.js, llama-reference.js) and llama2.c's
// recorded text; pages run under the strict CSP; nothing may be requested off 127.0.0.1; no
// console error. A missing engine fails under CI and is reported as a skip with its reason
// otherwise. Where an engine differs, the check says why.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { PNG } from 'pngjs';

import { ReferenceModel, ReferenceTokenizer, readLlama2c } from '../js/llama-reference.js';
import { audit } from './audit.js';
import { FIGURES_BODY, FIGURES_DATA, MULTI, ONE, startServer } from './engine-pages.js';
import { ENGINES, launch, missing } from './engines.js';
import { tabWalk } from './tab-walk.js';
import { SENTENCE, assertClose, parseSVG, readHeatmap, ref } from './elements/helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RECORDED_200 = readFileSync(path.join(ROOT, 'tests/fixtures/stories260K/expected_greedy_200.txt'), 'utf8');
const FIGURE_IDS = [...FIGURES_BODY.matchAll(/<attn-[a-z]+ id="([^"]+)"/g)].map((m) => m[1]).filter((id) => id !== 'broken');
const DEMO_FIGURES = ['bars', 'pipeline', 'heatmap', 'mask-heatmap', 'heads', 'play-bars', 'play-heatmap', 'play-pipeline',
  'generate', 'generate-heads'];
// Chromium and Firefox validate relaxed SIMD; WebKit (like Safari) has SIMD128 only.
const BUILD = { chromium: 'relaxed', firefox: 'relaxed', webkit: 'simd' };
const PIXEL = 1.5 / 255 / 0.7;  // one 8-bit step on the scale's widest channel, and rounding

// The data every engine draws (engine-pages.js), and its float64 reference.
const n = SENTENCE.length, one = ONE;
const WANT = ref.attention(one.q, one.k, one.v, { dK: 4 });
const WANT_MULTI = ref.multiHead(MULTI.x, MULTI).weights;
const head = (h) => Array.from(WANT_MULTI.subarray(h * n * n, (h + 1) * n * n));
const GENERATE_PROMPT = 'Lily had a red ball. She';

// stories260K's greedy continuation by the float64 reference (no code shared with the engine).
function referenceGreedy(prompt, steps) {
  const dir = path.join(ROOT, 'web/models/stories260K');
  const checkpoint = readLlama2c(readFileSync(path.join(dir, 'stories260K.bin')));
  const model = new ReferenceModel(checkpoint);
  const tokenizer = new ReferenceTokenizer(readFileSync(path.join(dir, 'tok512.bin')), checkpoint.config.vocabSize);
  const ids = tokenizer.encode(prompt);
  return model.greedy(ids, ids.length + steps - 1);  // positions, prompt included; returns the new ids
}

// Page side: set the figures' data and wait until every one is drawn.
const fill = (engine, data) => engine.evaluate(async ({ data, ids }) => {
  await Promise.all(ids.map((id) => customElements.whenDefined(document.getElementById(id).localName)));
  for (const [id, d] of Object.entries(data)) document.getElementById(id).data = d;
  const out = {};
  for (const id of ids) out[id] = (await document.getElementById(id).updateComplete) || document.getElementById(id).error;
  return out;
}, { data, ids: FIGURE_IDS });

const setTheme = (engine, theme) => engine.evaluate(async ({ theme, ids }) => {
  for (const id of [...ids, 'broken']) {
    const el = document.getElementById(id);
    if (theme) el.setAttribute('theme', theme); else el.removeAttribute('theme');
  }
  for (const id of ids) await document.getElementById(id).updateComplete;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
}, { theme, ids: FIGURE_IDS });

// What each figure computed, as plain arrays.
const computed = (engine) => engine.evaluate(() => {
  const el = (id) => document.getElementById(id);
  const a = (x) => Array.from(x);
  return {
    bars: { query: el('bars').query, row: a(el('bars').row) },
    heatmap: a(el('heatmap').weights),
    pipeline: { weights: a(el('pipeline').steps.weights), output: a(el('pipeline').steps.output) },
    heads: a(el('heads').result.weights[0]),
    lines: a(el('lines').weights),
    compare: { a: a(el('compare').weightsA), b: a(el('compare').weightsB), difference: a(el('compare').difference) },
    generate: { ids: a(el('generate').generation.ids), text: el('generate').generation.text },
  };
});

// Where cell (i, j) of a heatmap is on screen.
const cellPoint = (engine, id, i, j) => engine.evaluate(({ id, i, j }) => {
  const el = document.getElementById(id), { gutter, cell, n } = el.layout;
  el.scrollIntoView({ block: 'center' });
  const canvas = el.shadowRoot.querySelector('canvas.cells');
  const rect = canvas.getBoundingClientRect(), s = rect.width / (gutter + cell * n);
  return { x: rect.left + (gutter + (j + 0.5) * cell) * s, y: rect.top + (gutter + (i + 0.5) * cell) * s };
}, { id, i, j });

// A figure's exported PNG, decoded here: its pixels are compared with the theme's colours.
async function exportedPNG(engine, id) {
  const base64 = await engine.evaluate(async (id) => {
    const blob = await document.getElementById(id).toPNG({ pixelRatio: 1 });
    const bytes = new Uint8Array(await blob.arrayBuffer());
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return { type: blob.type, data: btoa(s) };
  }, id);
  assert.equal(base64.type, 'image/png');
  return PNG.sync.read(Buffer.from(base64.data, 'base64'));
}

const hexRGB = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
const near = (px, rgb, tolerance) => px.every((c, i) => Math.abs(c - rgb[i]) <= tolerance);

async function clean(engine, what) {
  assert.deepEqual(await engine.problems(), [], `${engine.name}, ${what}: console errors, page errors or CSP violations`);
  const offHost = await engine.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name)
    .filter((u) => !/^(data|blob):/.test(u) && new URL(u).hostname !== '127.0.0.1'));
  assert.deepEqual(offHost, [], `${engine.name}, ${what}: requests that left 127.0.0.1`);
}

// The figures page in each state a reader reaches, audited by axe-core (audit.js): as drawn (with
// one figure in its error state), then a pinned row with the hover and keyboard-focus readouts,
// compare's difference view and the generation figure while it writes, then after it wrote.
async function auditFigures(engine) {
  await engine.open(`${server.url}/__engines__/figures.html`);
  const drawn = await fill(engine, FIGURES_DATA);
  assert.deepEqual(drawn, Object.fromEntries(FIGURE_IDS.map((id) => [id, true])), 'every figure draws');
  const found = {};
  const broken = await engine.evaluate(async (bad) => {
    const el = document.getElementById('broken');
    el.data = bad;
    await el.updateComplete;
    return el.shadowRoot.querySelector('[role="alert"]')?.textContent ?? '';
  }, { tokens: ['a', 'b'], Q: [[1, 2]], K: [[1, 2], [3, 4]] });
  assert.match(broken, /Q has 1 rows but there are 2 tokens/);
  found['as drawn, one figure in its error state'] = await audit(engine);
  const p = await cellPoint(engine, 'heatmap', 4, 1);
  await engine.click(p.x, p.y);  // pins row 5; the pointer stays there: the hover readout shows
  await engine.evaluate(async () => {
    const compare = document.getElementById('compare');
    compare.setAttribute('view', 'difference');
    document.getElementById('lines').query = 3;
    document.getElementById('bars').query = 2;
    document.getElementById('generate').play();
    await compare.updateComplete;
    document.getElementById('pipeline').shadowRoot.querySelector('[role="tab"][aria-selected="true"]').focus();
  });
  found['pinned row, hover readout, difference view, generating'] = await audit(engine);
  await engine.evaluate(() => document.getElementById('heatmap').shadowRoot.querySelector('.plot').focus());
  await engine.keys('ArrowRight');  // the keyboard cursor's readout
  await engine.waitFor(() => !document.getElementById('generate').playing, null, { what: 'the generation to finish playing' });
  found['keyboard readout, generation written'] = await audit(engine);
  for (const [state, violations] of Object.entries(found)) assert.deepEqual(violations, [], `${engine.name}: ${state}`);
  await clean(engine, 'audits');
}

async function demoDrawn(engine) {
  const errors = await engine.evaluate(async (ids) => {
    await Promise.all(ids.map((id) => customElements.whenDefined(document.getElementById(id).localName)));
    const out = [];
    for (const id of ids) if (!(await document.getElementById(id).updateComplete)) out.push(`${id}: ${document.getElementById(id).error}`);
    return out;
  }, DEMO_FIGURES);
  assert.deepEqual(errors, [], 'every figure of the demo draws');
}

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.close(); });

for (const name of ENGINES) {
  const why = missing(name);
  describe(`${name}`, { skip: why && !process.env.CI ? `${name} is not installed here: ${why}` : false }, () => {
    let engine;
    before(async () => {
      if (why) throw new Error(`the cross-engine suite needs ${name}: ${why}`);
      engine = await launch(name);
    });
    after(async () => { await engine?.close(); });

    it('the figures page: strict CSP in force, the engine build, every element against float64 in light and dark', { timeout: 180000 }, async () => {
      await engine.open(`${server.url}/__engines__/figures.html`);
      const drawn = await fill(engine, FIGURES_DATA);
      assert.deepEqual(drawn, Object.fromEntries(FIGURE_IDS.map((id) => [id, true])), 'every figure draws');
      // The strict CSP is in force (an inline script is refused and reported), and the figures
      // drew under it without any other violation (clean() below).
      const csp = await engine.evaluate(async () => {
        const script = document.createElement('script');
        script.textContent = 'window.__inline = true';
        document.head.append(script);
        await new Promise((r) => setTimeout(r, 100));
        const at = window.__problems.findIndex((p) => p.startsWith('CSP violation: script-src'));
        return { ran: window.__inline === true, reported: at >= 0 && window.__problems.splice(at, 1).length === 1 };
      });
      assert.deepEqual(csp, { ran: false, reported: true }, 'an inline script is refused by the strict CSP');
      await new Promise((r) => setTimeout(r, 100));  // the driver's copy of that report, dropped
      engine.driverProblems.splice(0, Infinity, ...engine.driverProblems.filter((p) => !/inline script/i.test(p)));
      const build = await engine.evaluate(() => document.getElementById('heatmap').lens.build);
      assert.equal(build.replace(/-threads$/, ''), BUILD[name], `${name} runs the ${BUILD[name]} build`);

      const got = await computed(engine);
      const i = SENTENCE.indexOf('it');
      assert.equal(got.bars.query, i);
      assertClose(got.bars.row, Array.from(WANT.weights.subarray(i * n, (i + 1) * n)), 1e-5, `${name} bars`);
      assertClose(got.heatmap, Array.from(WANT.weights), 1e-5, `${name} heatmap`);
      assertClose(got.pipeline.weights, Array.from(WANT.weights), 1e-5, `${name} pipeline A`);
      assertClose(got.pipeline.output, Array.from(WANT.output), 1e-5, `${name} pipeline A·V`);
      assertClose(got.lines, Array.from(WANT.weights), 1e-5, `${name} lines`);
      assertClose(got.heads, Array.from(WANT_MULTI), 1e-5, `${name} heads`);
      assertClose(got.compare.a, head(0), 1e-5, `${name} compare A`);
      assertClose(got.compare.b, head(2), 1e-5, `${name} compare B`);
      assertClose(got.compare.difference, head(0).map((a, c) => a - head(2)[c]), 1e-5, `${name} compare A − B`);
      const greedy = referenceGreedy(GENERATE_PROMPT, 6);
      assert.deepEqual(got.generate.ids.slice(-6), greedy.slice(-6), `${name} generate: the float64 model's greedy ids`);

      // What is on the canvas, read back, is those weights: in light and in dark.
      for (const theme of ['light', 'dark']) {
        await setTheme(engine, theme);
        const bg = await engine.evaluate(() => getComputedStyle(document.getElementById('heatmap')).getPropertyValue('--attn-bg').trim());
        assert.equal(bg, theme === 'dark' ? '#16181c' : '#ffffff');
        const pixels = await readHeatmap(engine, 'heatmap');
        assertClose(pixels.values, Array.from(WANT.weights), PIXEL, `${name} ${theme} heatmap pixels`);
      }
      await setTheme(engine, null);
      await clean(engine, 'figures page');
    });

    it('keyboard: arrow keys, Home/End and Enter drive the heatmap, bars, pipeline and heads', { timeout: 180000 }, async () => {
      const focus = (id, selector) => engine.evaluate(({ id, selector }) => {
        const target = document.getElementById(id).shadowRoot.querySelector(selector);
        target.focus();
        return document.getElementById(id).shadowRoot.activeElement === target;
      }, { id, selector });
      const state = () => engine.evaluate(() => ({
        heatmap: document.getElementById('heatmap').query, bars: document.getElementById('bars').query,
        step: document.getElementById('pipeline').step, layer: document.getElementById('heads').layer,
        head: document.getElementById('heads').head,
      }));
      assert.ok(await focus('heatmap', '.plot'), 'the heatmap takes focus');
      await engine.keys('ArrowDown', 'ArrowDown', 'Enter');
      assert.equal((await state()).heatmap, 2, 'heatmap: ↓↓ Enter pins row 3');
      assert.ok(await focus('pipeline', '[role="tab"][aria-selected="true"]'));
      await engine.keys('Home', 'ArrowRight');
      assert.equal((await state()).step, 'scale', 'pipeline: Home then → is step 2');
      assert.ok(await focus('heads', '[role="gridcell"][tabindex="0"]'));
      await engine.keys('Home', 'ArrowRight', 'ArrowRight', 'Enter');
      assert.deepEqual([(await state()).layer, (await state()).head], [0, 2], 'heads: →→ Enter opens head 3');
      // Tab from the button before the figures reaches the first figure (a real Tab, not focus()).
      await engine.evaluate(() => document.getElementById('start').focus());
      await engine.keys('Tab');
      assert.equal(await engine.evaluate(() => document.activeElement?.id), 'bars');
      await clean(engine, 'keyboard');
    });

    it('Tab alone reaches every control of every figure, each with a visible focus ring', { timeout: 180000 }, async () => {
      const walk = await tabWalk(engine, FIGURE_IDS, { pressTab: () => engine.keys('Tab') });
      assert.deepEqual(walk.missed, [], `${name}: controls Tab never reached`);
      // Firefox does not count focus moved by the BiDi driver's Tab as keyboard focus, so
      // :focus-visible (where the ring is drawn) never matches there; a reader's Tab does. The ring
      // is checked in Chromium and WebKit.
      if (name === 'firefox') assert.equal(walk.unringed.length, walk.reached.length, 'Firefox now shows :focus-visible for the driver\'s Tab: check the ring here too');
      else assert.deepEqual(walk.unringed, [], `${name}: controls without a visible focus ring`);
      assert.ok(walk.reached.length >= 20, `${walk.reached.length} tab stops`);
      await clean(engine, 'tab walk');
    });

    it('a click pins a heatmap row', { timeout: 180000 }, async () => {
      const p = await cellPoint(engine, 'heatmap', 4, 1);
      await engine.click(p.x, p.y);
      await engine.waitFor(() => document.getElementById('heatmap').query === 4, null, { what: 'row 5 pinned' });
      await clean(engine, 'click');
    });

    it('exports: SVG parses with the tokens as text, the PNG has the theme\'s colours, HTML opens from file:// offline', { timeout: 180000 }, async () => {
      const svg = await engine.evaluate(() => document.getElementById('heatmap').toSVG());
      const parsed = await parseSVG(engine, svg);
      assert.equal(parsed.ok, true, parsed.error);
      assert.equal(parsed.scripts, 0);
      for (const t of ['cat', 'tired']) assert.ok(parsed.texts.includes(t), `SVG text ${t}`);
      // The PNG, decoded here: its background is --attn-bg and the heaviest cell is on the scale.
      const png = await exportedPNG(engine, 'heatmap');
      assert.ok(png.width > 100 && png.height > 100, `${png.width}×${png.height}`);
      const at = (px, py) => Array.from(png.data.subarray((py * png.width + px) * 4, (py * png.width + px) * 4 + 3));
      assert.ok(near(at(1, 1), [255, 255, 255], 2), `PNG corner ${at(1, 1)} is the light background`);
      // Every cell's colour (the weight on the light scale, --attn-low → --attn-high) is in the PNG.
      const low = hexRGB('#f3f6fb'), high = hexRGB('#1f4fb4');
      const colours = new Set();
      for (let p = 0; p < png.data.length; p += 4) colours.add((png.data[p] << 16) | (png.data[p + 1] << 8) | png.data[p + 2]);
      const unpack = (c) => [c >> 16, (c >> 8) & 255, c & 255];
      const palette = [...colours].map(unpack);
      for (const [c, w] of WANT.weights.entries()) {
        const want = low.map((l, k) => l + w * (high[k] - l));
        assert.ok(palette.some((px) => near(px, want, 2)), `${name}: PNG has no pixel of cell ${c}'s colour ${want.map(Math.round)} (weight ${w})`);
      }
      // The standalone HTML file, from file://. Only data: and blob: may load in it.
      const html = await engine.evaluate(() => document.getElementById('heatmap').toHTML({ theme: 'light' }));
      const dir = await mkdtemp(path.join(tmpdir(), `attnlens-${name}-`));
      try {
        const file = path.join(dir, 'heatmap.html');
        await writeFile(file, html);
        await engine.open(pathToFileURL(file).href);
        const shown = await engine.waitFor(async () => {
          const el = document.querySelector('attn-heatmap');
          if (!el || !customElements.get('attn-heatmap') || !(await el.updateComplete)) return null;
          return { weights: Array.from(el.weights), query: el.query,
            requests: performance.getEntriesByType('resource').map((e) => e.name).filter((u) => !/^(data|blob):/.test(u)) };
        }, null, { what: 'the standalone figure' });
        assertClose(shown.weights, Array.from(WANT.weights), 1e-5, `${name} standalone weights`);
        assert.deepEqual(shown.requests, [], 'the standalone file requests nothing');
        const pixels = await readHeatmap(engine, (await engine.evaluate(() => document.querySelector('attn-heatmap').id ||= 'standalone')));
        assertClose(pixels.values, Array.from(WANT.weights), PIXEL, `${name} standalone pixels`);
        assert.deepEqual(await engine.problems(), [], 'the standalone file: no console error');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('the single-file bundle draws alone', { timeout: 180000 }, async () => {
      await engine.open(`${server.url}/__engines__/single.html`);
      const drawn = await engine.evaluate(async (data) => {
        await customElements.whenDefined('attn-heatmap');
        const el = document.getElementById('single');
        el.data = data;
        return (await el.updateComplete) && Array.from(el.weights);
      }, one.json);
      assertClose(drawn, Array.from(WANT.weights), 1e-5, `${name} single-file heatmap`);
      await clean(engine, 'single file');
    });

    it('threads in a cross-origin-isolated page: the threaded build, bit-identical to one thread', { timeout: 180000 }, async () => {
      await engine.open(`${server.url}/__engines__/threads.html`);
      const r = await engine.waitFor(() => window.__threads, null, { what: 'the threads page' });
      // WebKitGTK 2.50 (MiniBrowser) defines no SharedArrayBuffer global even in an isolated page
      // (shared WebAssembly.Memory works, the constructor is not exposed), so the engine falls back
      // to one thread, quietly: what a reader with that browser gets. The others run 2 threads.
      const threaded = name !== 'webkit';
      assert.deepEqual({ ...r, same: undefined }, { isolated: true, supported: threaded, threads: threaded ? 2 : 1, threaded,
        build: BUILD[name], singleBuild: BUILD[name], same: undefined }, `${name}: the ${BUILD[name]} build, ${threaded ? 'threaded' : 'one thread'}`);
      if (!threaded) assert.equal(await engine.evaluate(() => typeof SharedArrayBuffer), 'undefined', 'WebKitGTK still hides SharedArrayBuffer: make this engine threaded');
      assert.equal(r.same, true, 'threaded and single-thread results are bit-identical');
      await clean(engine, 'threads');
    });

    it('the demo end to end: the model loads, every figure draws, stories260K writes llama2.c\'s greedy text', { timeout: 180000 }, async () => {
      await engine.open(`${server.url}/demo/`);
      await demoDrawn(engine);
      assert.match(await engine.evaluate(() => document.getElementById('model-status').textContent), /Model ready/);
      const build = await engine.evaluate(() => document.getElementById('mask-heatmap').lens.build);
      assert.equal(build.replace(/-threads$/, ''), BUILD[name]);
      // Greedy from BOS, 200 steps: llama2.c's recorded output, byte for byte.
      const text = await engine.evaluate(async () => {
        const el = document.getElementById('generate');
        el.setAttribute('temperature', '0');
        el.setAttribute('steps', '200');
        el.prompt = '';
        await el.updateComplete;
        return el.generation.text;
      });
      assert.equal(text, RECORDED_200);
      await clean(engine, 'demo');
    });

    it('axe-core, light: no serious or critical WCAG 2.1 A/AA violation on the demo page', { timeout: 180000 }, async () => {
      await engine.open(`${server.url}/demo/`);
      await demoDrawn(engine);
      assert.deepEqual(await audit(engine), [], `${name}: the demo page`);
      await clean(engine, 'demo audit');
    });

    it('axe-core, light: none on any element, in every state a reader reaches', { timeout: 240000 }, () => auditFigures(engine));
  });

  // prefers-color-scheme: dark, as the engine reports it to pages (a second session).
  describe(`${name}, dark`, { skip: why && !process.env.CI ? `${name} is not installed here: ${why}` : false }, () => {
    let engine;
    before(async () => {
      if (why) throw new Error(`the cross-engine suite needs ${name}: ${why}`);
      engine = await launch(name, { colorScheme: 'dark' });
    });
    after(async () => { await engine?.close(); });

    it('axe-core, dark: the demo page follows the dark scheme, no serious or critical violation', { timeout: 180000 }, async () => {
      await engine.open(`${server.url}/demo/`);
      assert.equal(await engine.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), true, `${name} reports the dark scheme`);
      await demoDrawn(engine);
      assert.equal(await engine.evaluate(() => getComputedStyle(document.getElementById('heatmap')).getPropertyValue('--attn-bg').trim()), '#16181c');
      assert.deepEqual(await audit(engine), [], `${name}: the demo page, dark`);
      await clean(engine, 'demo audit, dark');
    });

    it('axe-core, dark: none on any element, in every state a reader reaches', { timeout: 240000 }, () => auditFigures(engine));
  });
}
