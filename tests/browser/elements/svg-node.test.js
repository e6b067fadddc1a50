// The same SVG bytes in the browser and in Node: each figure's toSVG() in Chromium equals the
// pure function (web/elements/svg/*.js) run in Node on the same data and state with themeFor(),
// including embedded PNGs (large heatmap, head thumbnails) and masks, in both themes.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { init } from '../../../web/attnlens.js';
import { computeSteps, computeWeights, selectedMatrix } from '../../../web/elements/lib/compute.js';
import { parseData } from '../../../web/elements/lib/data.js';
import { themeFor } from '../../../web/elements/lib/theme.js';
import { barsSVG } from '../../../web/elements/svg/bars.js';
import { headsSVG } from '../../../web/elements/svg/heads.js';
import { heatmapSVG } from '../../../web/elements/svg/heatmap.js';
import { pipelineSVG } from '../../../web/elements/svg/pipeline.js';
import { startBrowser } from '../support.js';
import { assertClean, ref, setData, vectors } from './helpers.js';

const BIG = { tokens: Array.from({ length: 80 }, (_, i) => (i % 7 ? `w${i}` : `<b>&"${i}'`)), attention: ref.randomAttention(1, 2, 80, 21), causal: true };
const HEADS = { tokens: ['a', 'b', '<c>', 'd', 'e'], attention: ref.randomAttention(2, 3, 5, 22), causal: true };
const SMALL = vectors(['we', '&', 'more', '"data"'], { dK: 3, seed: 30 }).json;

describe('SVG export: browser bytes = Node bytes', () => {
  let browser, page, lens;
  before(async () => {
    lens = await init();
    browser = await startBrowser();
    page = await browser.fixture(`
      <attn-heatmap id="map" head="1" query="5"></attn-heatmap>
      <attn-heads id="heads" layer="1" head="2"></attn-heads>
      <attn-bars id="bars" query="2"></attn-bars>
      <attn-pipeline id="pipe" query="1" mask="causal"></attn-pipeline>`);
  });
  afterEach(() => browser?.assertNoProblems());
  after(() => browser?.close());

  const svgOf = (id, theme) => page.evaluate(async ([id, theme]) => {
    const el = document.getElementById(id);
    el.setAttribute('theme', theme);
    await el.updateComplete;
    return el.toSVG();
  }, [id, theme]);
  const state = { scale: 'auto', temperature: 1 };

  for (const theme of ['light', 'dark']) {
    it(`heatmap (80 tokens, causal, embedded PNG) and heads (masked thumbnails), ${theme}`, async () => {
      assert.equal(await setData(page, 'map', BIG), true);
      assert.equal(await setData(page, 'heads', HEADS), true);
      const big = computeWeights(null, parseData(BIG), { ...state, mask: 'causal' });
      const got = await svgOf('map', theme);
      assert.ok(got.includes('<image '), 'the large heatmap embeds an image');
      assert.equal(got, heatmapSVG(big, themeFor(theme), { layer: 0, head: 1, query: 5 }));
      const heads = computeWeights(null, parseData(HEADS), { ...state, mask: 'causal' });
      // The grid's mean, max and rollout tiles: the engine's aggregates, here from Node's engine.
      const aggregate = (layer, head) => selectedMatrix(lens, heads, layer, head);
      assert.equal(await svgOf('heads', theme), headsSVG(heads, themeFor(theme), { layer: 1, head: 2, aggregate }));
      assertClean(page, browser);
    });

    it(`bars and pipeline (vectors through the engine in both), ${theme}`, async () => {
      assert.equal(await setData(page, 'bars', SMALL), true);
      assert.equal(await setData(page, 'pipe', SMALL), true);
      const data = parseData(SMALL);
      assert.equal(await svgOf('bars', theme), barsSVG(computeWeights(lens, data, { ...state, mask: 'none' }), themeFor(theme), { query: 2 }));
      const steps = computeSteps(lens, data, { ...state, mask: 'causal' }, 0);
      assert.equal(await svgOf('pipe', theme), pipelineSVG(steps, themeFor(theme), { query: 1, mask: 'causal' }));
      assertClean(page, browser);
    });
  }
});
