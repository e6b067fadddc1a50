// The command line's output against the elements in Chromium: for every figure, data kind,
// state (hide, the lines' own attributes too) and theme, `attnlens render --format svg` is byte-equal to the element's toSVG() and
// `--format html` to its toHTML() (also with --width); the SVG (with hostile tokens) parses as SVG in the browser.
// The CLI sets no V8 flag: run plainly (Node 20: the SIMD128 build) it equals a page running the
// SIMD128 build (the single-file bundle, as in standalone files and Safari); run with node
// --experimental-wasm-relaxed-simd it equals a Chromium page on the relaxed-SIMD build.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, parseSVG, ref, vectors } from './helpers.js';

const CLI = fileURLToPath(new URL('../../../web/cli/attnlens.js', import.meta.url));
const HOSTILE = ['<script>alert(1)</script>', '&amp;', '"quoted"', "it's", ']]>', '<!--', 'x'];

const two = vectors(SENTENCE, { dK: 8, seed: 51, spread: 2 });  // 8 columns = 2 heads of 4
const TWO_HEADS = { tokens: SENTENCE, heads: 2, Q: two.json.Q, K: two.json.K, V: two.json.V };
const LONG = { tokens: Array.from({ length: 70 }, (_, i) => (i > 64 ? '[PAD]' : `t${i}`)), attention: ref.randomAttention(1, 1, 70, 52) };
const LAYERS = { tokens: HOSTILE, attention: ref.randomAttention(2, 3, HOSTILE.length, 53) };
const CROSS = { queryTokens: ['le', 'chat', '<dort>'], keyTokens: ['the', 'cat', 'is', 'asleep'],
  attention: [[[0.7, 0.1, 0.1, 0.1], [0.1, 0.8, 0.05, 0.05], [0.05, 0.05, 0.3, 0.6]]] };
const SMALL = vectors(['we', 'need', '<more>', 'data'], { dK: 3, seed: 54 }).json;

// [figure, data, state attributes (= CLI options)]
const CASES = [
  ['heatmap', TWO_HEADS, { head: '1', query: 'sat', scale: '0.5', mask: 'causal' }],
  ['heatmap', LONG, { query: '3', mask: 'padding' }],
  ['heatmap', LAYERS, { layer: '1', head: '2', temperature: '2' }],
  ['bars', TWO_HEADS, { query: '2', temperature: '0.5' }],
  ['bars', LAYERS, { layer: '1', head: '1', query: '0' }],
  ['heads', LAYERS, { layer: '1', head: '2', mask: 'causal' }],
  ['pipeline', SMALL, { query: '1', step: 'softmax', mask: 'causal' }],
  ['heatmap', TWO_HEADS, { hide: 'The .', renormalize: '', query: 'it' }],
  ['bars', LAYERS, { hide: '0 2', query: '1' }],
  ['lines', LAYERS, { layer: '1', heads: 'all', threshold: '0.05' }],
  ['lines', TWO_HEADS, { key: 'cat', head: '1', hide: '.' }],
  ['heatmap', LAYERS, { layer: '1', head: 'mean', query: '2' }],
  ['heatmap', LAYERS, { layer: 'rollout' }],
  ['bars', LAYERS, { head: 'max', query: '3' }],
  ['heatmap', CROSS, { query: 'chat' }],
  ['bars', CROSS, { query: '2' }],
  ['heatmap', { model: 'stories260K', text: 'Once upon a time' }, { layer: '3', head: '1', query: '2' }],
  // Aggregates in the lines view (the engine's mean and rollout), cross-attention with hiding.
  ['lines', LAYERS, { layer: '1', head: 'mean', query: '2' }],
  ['lines', LAYERS, { layer: 'rollout' }],
  ['heatmap', CROSS, { hide: 'cat <dort>', renormalize: '', query: '0' }],
  ['heads', CROSS, { layer: '0', head: '0' }],
  ['lines', CROSS, { key: 'cat', threshold: '0' }],
];

const RELAXED = ['--experimental-wasm-relaxed-simd'];

describe('attnlens render = the element in Chromium', () => {
  let browser, page, single, dir;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<main></main>');
    single = await browser.fixture('<main></main>', { modules: ['/dist/attnlens-single.js'], name: 'single' });
    dir = await mkdtemp(path.join(tmpdir(), 'attnlens-cli-browser-'));
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** An element made like an author would (attributes, then data), its toSVG() and toHTML(). */
  const exportsOf = (figure, data, attributes, theme, where = page) => where.evaluate(async ([figure, data, attributes, theme]) => {
    await customElements.whenDefined(`attn-${figure}`);
    const el = document.createElement(`attn-${figure}`);
    for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, v);
    el.setAttribute('theme', theme);
    el.data = data;
    document.querySelector('main').append(el);
    const ok = await el.updateComplete;
    try {
      return ok ? {
        build: el.lens?.build, svg: el.toSVG(), narrow: el.toSVG({ width: 333 }), html: await el.toHTML(),
        narrowHTML: await el.toHTML({ width: 333 }),
      } : { error: el.error };
    } finally {
      el.remove();
    }
  }, [figure, data, attributes, theme]);

  const cli = async (file, args, node = RELAXED) =>
    (await promisify(execFile)(process.execPath, [...node, CLI, 'render', file, ...args], { maxBuffer: 64 << 20 })).stdout;

  CASES.forEach(([figure, data, attributes], c) => {
    it(`${figure} ${JSON.stringify(attributes)}: SVG and HTML byte-equal, in both themes`, async () => {
      const file = path.join(dir, `case${c}.json`);
      await writeFile(file, JSON.stringify(data));
      const options = Object.entries(attributes).flatMap(([k, v]) => [`--${k}`, v]);
      for (const theme of ['light', 'dark']) {
        const element = await exportsOf(figure, data, attributes, theme);
        assert.equal(element.error, undefined, element.error);
        const args = ['--figure', figure, '--theme', theme, ...options];
        if (element.build) assert.equal(element.build, 'relaxed', 'the page runs the relaxed-SIMD build');
        assert.equal(await cli(file, args), element.svg, `${theme} SVG`);
        assert.equal(await cli(file, [...args, '--width', '333']), element.narrow, `${theme} SVG, width 333`);
        assert.equal(await cli(file, [...args, '--format', 'html']), element.html, `${theme} HTML`);
        if (theme === 'light') {
          if (CASES.findIndex(([f]) => f === figure) === c)  // once per figure: the HTML's width
            assert.equal(await cli(file, [...args, '--format', 'html', '--width', '333']), element.narrowHTML, 'HTML, width 333');
          // No V8 flag: the SIMD128 build, as in a page with the single-file bundle (no model add-on).
          if (!data.model) {
            const simd = await exportsOf(figure, data, attributes, theme, single);
            assert.equal(simd.error, undefined, simd.error);
            if (simd.build) assert.equal(simd.build, 'simd', 'the single-file bundle runs SIMD128');
            assert.equal(await cli(file, args, []), simd.svg, 'SVG from plain node = the SIMD128 page');
          }
        }
        const parsed = await parseSVG(page, element.svg);
        assert.equal(parsed.ok, true, parsed.error);
        assert.equal(parsed.scripts, 0);
        if (data.tokens === HOSTILE && !['heads', 'lines'].includes(figure) && !attributes.hide)
          assert.ok(parsed.texts.some((t) => t.startsWith('<script>')), 'the token shows as text');
      }
      assertClean(page, browser);
      assertClean(single, browser);
    });
  });
});
