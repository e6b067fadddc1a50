// DOM-free parts of token hiding, <attn-lines> and <attn-compare> in Node: the hide parser,
// applyFilter on self- and cross-attention results (checked against loops written here), and the
// SVG exports built from precomputed weights (lines and cells against the input numbers).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { computeWeights, isMasked, maskMatrix } from '../../web/elements/lib/compute.js';
import { parseData } from '../../web/elements/lib/data.js';
import { applyFilter, formatHide, hiddenNote, parseHide } from '../../web/elements/lib/filter.js';
import { themeFor } from '../../web/elements/lib/theme.js';
import { compareSVG } from '../../web/elements/svg/compare.js';
import { linesSVG } from '../../web/elements/svg/lines.js';

import * as ref from './reference.js';

const attrs = (svg, selector) => [...svg.matchAll(new RegExp(`<${selector} ([^>]*)/>`, 'g'))]
  .map((m) => Object.fromEntries([...m[1].matchAll(/([\w-]+)="([^"]*)"/g)].map(([, k, v]) => [k, v])));

describe('hide: parsing', () => {
  it('reads words, indices and JSON lists, and writes them back', () => {
    assert.deepEqual(parseHide('[CLS] [SEP]'), ['[CLS]', '[SEP]']);
    assert.deepEqual(parseHide(' 0  5 '), [0, 5]);
    assert.deepEqual(parseHide('["a b", 3, "7"]'), ['a b', 3, '7']);
    assert.deepEqual(parseHide(['x', 2]), ['x', 2]);
    assert.deepEqual(parseHide(''), []);
    assert.deepEqual(parseHide(null), []);
    assert.equal(formatHide(['[CLS]', 0]), '[CLS] 0');
    assert.equal(formatHide(['a b', '7']), '["a b","7"]');
    assert.equal(formatHide(['[CLS]', '[SEP]']), '[CLS] [SEP]');
    assert.equal(formatHide(['[1]']), '["[1]"]');  // as words it would read back as the JSON list [1]
    for (const list of [['a b', 1], ['[CLS]', '[SEP]'], [0, 'x'], ['12'], ['[1]'], ['[]']]) assert.deepEqual(parseHide(formatHide(list)), list);
    assert.equal(formatHide([]), null);
  });

  it('refuses what is not a text or an index', () => {
    assert.throws(() => parseHide([1.5]), RangeError);
    assert.throws(() => parseHide([-1]), /hide\[0\] must be a token index ≥ 0/);
    assert.throws(() => parseHide([null]), TypeError);
    assert.throws(() => parseHide({}), TypeError);
  });
});

describe('applyFilter', () => {
  const tokens = ['[CLS]', 'a', 'b', '[SEP]', 'c'];
  const attention = ref.randomAttention(2, 3, tokens.length, 4);
  const result = computeWeights(null, parseData({ tokens, attention }), { scale: 'auto', temperature: 1, mask: 'none' });

  it('removes rows and columns in every layer and head; renormalises when asked', () => {
    for (const renormalize of [false, true]) {
      const r = applyFilter(result, { hide: ['[CLS]', 3], renormalize });
      const keep = [1, 2, 4];
      assert.deepEqual(r.tokens, ['a', 'b', 'c']);
      assert.deepEqual([r.n, r.nQ, r.nK], [3, 3, 3]);
      assert.deepEqual(r.hidden, { queries: [0, 3], keys: [0, 3], renormalized: renormalize, count: 2 });
      assert.equal(hiddenNote(r.hidden), `2 tokens hidden; ${renormalize ? 'rows renormalised to sum to 1' : 'rows sum to less than 1 (not renormalised)'}`);
      for (let l = 0; l < 2; l++)
        for (let h = 0; h < 3; h++)
          keep.forEach((i, r2) => {
            const row = keep.map((j) => attention[l][h][i][j]);
            const sum = row.reduce((x, y) => x + y, 0);
            row.forEach((w, c) => {
              const got = r.weights[l][(h * 3 + r2) * 3 + c];
              assert.ok(Math.abs(got - (renormalize ? w / sum : w)) < 1e-6, `layer ${l} head ${h} (${i}, ${keep[c]})`);
            });
          });
    }
    assert.equal(applyFilter(result, { hide: ['nothing'] }).hidden.count, 0);
    assert.throws(() => applyFilter(result, { hide: [5] }), /hide: token index 5 is past the last token \(4\)/);
    assert.throws(() => applyFilter(result, { hide: tokens }), /hide removes every query token/);
  });

  it('cross-attention: queries and keys lose their own tokens; a causal mask still compares the original positions', () => {
    const nQ = 2, nK = 4;
    const weights = Float32Array.from({ length: nQ * nK }, (_, c) => (c + 1) / 10);
    const cross = {
      tokens: ['x', 'y'], queryTokens: ['x', 'y'], keyTokens: ['<s>', 'p', 'x', 'q'], n: nQ, nQ, nK, layers: 1, heads: 1,
      masks: { causal: false, keyMask: Uint8Array.from([1, 1, 0, 1]) }, weights: [weights],
    };
    const r = applyFilter(cross, { hide: ['x', '<s>'] });
    assert.deepEqual(r.queryTokens, ['y']);
    assert.deepEqual(r.keyTokens, ['p', 'q']);
    assert.deepEqual([r.nQ, r.nK, r.n], [1, 2, 1]);
    assert.deepEqual(Array.from(r.weights[0]), [weights[1 * nK + 1], weights[1 * nK + 3]]);
    assert.deepEqual(Array.from(r.masks.keyMask), [1, 1]);
    assert.equal(r.hidden.count, 3);
    const causal = applyFilter({ ...cross, masks: { causal: true, keyMask: null } }, { hide: ['<s>'] });
    assert.equal(applyFilter({ ...cross, masks: { causal: true, keyMask: null } }, { hide: [0] }).masks.causal, true, 'row 0 and column 0 gone: j > i still holds');
    // Rows keep x, y (positions 0, 1); columns p, x, q (positions 1, 2, 3): masked where key position > query position.
    assert.equal(causal.masks.causal, true, 'rows and columns lost different positions: still causal');
    assert.deepEqual([Array.from(causal.masks.queryPositions), Array.from(causal.masks.keyPositions)], [[0, 1], [1, 2, 3]]);
    const want = [[0, 1], [1, 2, 3]][0].map((qp) => [1, 2, 3].map((kp) => (kp > qp ? 1 : 0)));
    assert.deepEqual(Array.from(maskMatrix(causal.masks, 2, 3)), want.flat());
    for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) assert.equal(isMasked(causal.masks, i, j), want[i][j] === 1, `(${i}, ${j})`);
    // A second filter composes with the first: positions stay the data's own.
    const twice = applyFilter({ ...causal, hidden: undefined }, { hide: ['p'] });
    assert.deepEqual([Array.from(twice.masks.queryPositions), Array.from(twice.masks.keyPositions)], [[0, 1], [2, 3]]);
    assert.equal(isMasked(twice.masks, 0, 0), true, 'x (position 0) must not see x (position 2)');
    assert.equal(isMasked(twice.masks, 1, 0), true, 'y (position 1) must not see x (position 2)');
  });
});

describe('SVG of <attn-lines> and <attn-compare> in Node', () => {
  const tokens = ['<b>', 'cat', 'sat', '&'];
  const attention = ref.randomAttention(1, 2, tokens.length, 8, 3);
  const result = computeWeights(null, parseData({ tokens, attention }), { scale: 'auto', temperature: 1, mask: 'none' });

  it('lines: every line above the threshold, or the focused key\'s column, with the input weights', () => {
    const svg = linesSVG(result, themeFor('dark'), { layer: 0, heads: [0, 1], focus: null, threshold: 0.05 });
    const lines = attrs(svg, 'path').filter((p) => p['data-query'] !== undefined);
    const want = [];
    for (let h = 0; h < 2; h++) for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) if (attention[0][h][i][j] >= 0.05) want.push([h, i, j]);
    assert.deepEqual(lines.map((p) => [+p['data-head'], +p['data-query'], +p['data-key']]), want);
    for (const p of lines) assert.ok(Math.abs(+p['data-weight'] - attention[0][+p['data-head']][+p['data-query']][+p['data-key']]) < 1e-6);
    assert.ok(svg.includes('&lt;b&gt;') && svg.includes('&amp;') && !svg.includes('<b>'));
    const column = attrs(linesSVG(result, themeFor('light'), { layer: 0, heads: [1], focus: { side: 'key', index: 2 }, threshold: 0 }), 'path');
    assert.deepEqual(column.map((p) => [+p['data-query'], +p['data-key'], +p['data-weight']]),
      [0, 1, 2, 3].map((i) => [i, 2, Math.fround(attention[0][1][i][2])]));
  });

  it('compare: A, B and A − B cells equal the inputs and their difference', () => {
    const sides = { a: { layer: 0, head: 0, label: 'A' }, b: { layer: 0, head: 1, label: 'B' } };
    const svg = compareSVG({ ...result, a: result, b: result }, themeFor('light'), { view: 'all', sides });
    const cells = attrs(svg, 'rect').filter((r) => r['data-panel']);
    for (const [panel, value] of [['a', (i, j) => attention[0][0][i][j]], ['b', (i, j) => attention[0][1][i][j]],
      ['difference', (i, j) => Math.fround(attention[0][0][i][j]) - Math.fround(attention[0][1][i][j])]]) {
      const got = cells.filter((r) => r['data-panel'] === panel);
      assert.equal(got.length, 16, panel);
      for (const r of got) assert.ok(Math.abs(+r['data-value'] - value(+r['data-row'], +r['data-column'])) < 1e-6, `${panel} ${r['data-row']},${r['data-column']}`);
    }
  });
});

describe('the command line renders <attn-lines> and honours hide', () => {
  it('render(data, { figure: "lines", query, hide, renormalize }) draws the filtered row', async () => {
    const { render } = await import('../../web/cli/render.js');
    const { figures } = await import('../../web/cli/figures.js');
    const tokens = ['[CLS]', 'a', 'b', 'c'];
    const attention = ref.randomAttention(1, 1, 4, 12, 2);
    const svg = await render({ tokens, attention }, { figure: 'lines', query: 2, hide: '[CLS]', renormalize: true });
    const row = attention[0][0][3].slice(1);
    const sum = row.reduce((x, y) => x + y, 0);
    const lines = attrs(svg, 'path').filter((p) => p['data-query'] !== undefined);
    assert.deepEqual(lines.map((p) => +p['data-key']), [0, 1, 2].filter((j) => row[j] / sum >= 0.01));
    assert.ok(lines.length >= 2);
    lines.forEach((p) => assert.ok(Math.abs(+p['data-weight'] - row[+p['data-key']] / sum) < 1e-6));
    assert.ok(!svg.includes('[CLS]'), 'the hidden token is not drawn');
    assert.equal((await figures()).compare, undefined, 'compare needs two sources: not a command-line figure');
  });
});
