// The figures' SVG export without a DOM: the PNG encoder against independent decoders (node:zlib,
// pngjs), and each figure's SVG built in Node from precomputed weights: tokens escaped, embedded
// images that decode back to the weights, the same bytes for the same input.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';

import { PNG } from 'pngjs';

import { computeWeights } from '../../web/elements/lib/compute.js';
import { parseData } from '../../web/elements/lib/data.js';
import { encodePNG, zlib } from '../../web/elements/lib/png.js';
import { themeFor } from '../../web/elements/lib/theme.js';
import { barsSVG } from '../../web/elements/svg/bars.js';
import { headsSVG } from '../../web/elements/svg/heads.js';
import { heatmapSVG } from '../../web/elements/svg/heatmap.js';

import * as ref from './reference.js';

const resultFor = (json, mask = 'none') => computeWeights(null, parseData(json), { scale: 'auto', temperature: 1, mask });
const images = (svg) => [...svg.matchAll(/<image [^>]*href="data:image\/png;base64,([^"]+)"/g)].map((m) => PNG.sync.read(Buffer.from(m[1], 'base64')));

describe('PNG encoder', () => {
  it('zlib output inflates back to the input (runs, repeated rows, random bytes)', () => {
    const next = ref.random(5);
    const random = Uint8Array.from({ length: 70_001 }, () => Math.floor(next() * 256));
    const runs = Uint8Array.from({ length: 50_000 }, (_, i) => Math.floor(i / 700) % 7);
    const rows = Uint8Array.from({ length: 30_000 }, (_, i) => (i % 300) * 7 % 251);
    for (const [bytes, stride] of [[random, 0], [runs, 0], [rows, 300], [new Uint8Array(0), 0], [new Uint8Array([9]), 0]])
      assert.deepEqual(new Uint8Array(inflateSync(zlib(bytes, stride))), bytes);
    assert.ok(zlib(runs).length < runs.length / 50, 'runs compress');
    assert.ok(zlib(rows, 300).length < rows.length / 20, 'repeated rows compress');
  });

  it('RGBA and palette images decode (pngjs) to the same pixels', () => {
    const next = ref.random(9);
    const rgba = Uint8Array.from({ length: 37 * 23 * 4 }, () => Math.floor(next() * 256));
    const a = PNG.sync.read(Buffer.from(encodePNG({ width: 37, height: 23, rgba })));
    assert.deepEqual([a.width, a.height], [37, 23]);
    assert.deepEqual(new Uint8Array(a.data), rgba);
    const palette = new Uint8Array([10, 20, 30, 200, 100, 0, 1, 2, 3]);
    const indices = Uint8Array.from({ length: 5 * 4 }, (_, i) => i % 3);
    const b = PNG.sync.read(Buffer.from(encodePNG({ width: 5, height: 4, indices, palette })));
    for (let i = 0; i < 20; i++)
      assert.deepEqual([...b.data.subarray(i * 4, i * 4 + 4)], [...palette.subarray((i % 3) * 3, (i % 3) * 3 + 3), 255]);
  });

  it('refuses bad sizes and types', () => {
    assert.throws(() => encodePNG({ width: 0, height: 2, rgba: new Uint8Array(0) }), RangeError);
    assert.throws(() => encodePNG({ width: 2, height: 2, rgba: new Uint8Array(3) }), /expected 16 bytes/);
    assert.throws(() => encodePNG({ width: 1, height: 1, rgba: [1, 2, 3, 4] }), TypeError);
    assert.throws(() => encodePNG({ width: 1, height: 1, indices: new Uint8Array(1), palette: new Uint8Array(4) }), /palette/);
  });
});

describe('SVG export in Node', () => {
  it('escapes every token as text', () => {
    const tokens = ['<script>alert(1)</script>', '&amp;', '"q"', "it's", ']]>', 'a\u0001b'];
    const result = resultFor({ tokens, attention: ref.randomAttention(1, 2, tokens.length, 3, 3) });
    for (const svg of [heatmapSVG(result, themeFor('light'), { query: 0 }), barsSVG(result, themeFor('dark'), { query: 1 }), headsSVG(result, themeFor('light'))]) {
      assert.ok(!svg.includes('<script'), 'no script element');
      assert.ok(!/&(?!(amp|lt|gt|quot|#39);)/.test(svg), 'every & is an entity');
      assert.ok(!svg.includes('\u0001'));
    }
    assert.ok(heatmapSVG(result, themeFor('light')).includes('&lt;script&gt;alert(1…'), 'the token, escaped');
  });

  it('long emoji tokens are cut between characters and a lone surrogate becomes U+FFFD: well-formed UTF-8 text', () => {
    const tokens = ['😀'.repeat(20), 'a\ud800b', 'x\udc00', 'ok'];
    const result = resultFor({ tokens, attention: ref.randomAttention(1, 2, tokens.length, 4, 3) });
    for (const svg of [heatmapSVG(result, themeFor('light'), { query: 0 }), barsSVG(result, themeFor('dark'), { query: 0 }), headsSVG(result, themeFor('light'))]) {
      assert.equal(Buffer.from(svg, 'utf8').toString('utf8'), svg, 'no half of a surrogate pair (UTF-8 would replace it)');
      assert.ok(svg.includes('a\ufffdb') && svg.includes('x\ufffd'), 'the lone halves shown as replacement characters');
    }
    assert.ok(barsSVG(result, themeFor('light'), { query: 0 }).includes('😀😀😀…'), 'whole emoji before the ellipsis');
  });

  it('a large heatmap embeds one image whose pixels are the weights, masked cells hatched', () => {
    const n = 90, json = { tokens: Array.from({ length: n }, (_, i) => `t${i}`), attention: ref.randomAttention(1, 1, n, 4, 3), causal: true };
    const result = resultFor(json, 'causal');
    const theme = themeFor('light');
    const svg = heatmapSVG(result, theme);
    assert.equal(svg, heatmapSVG(resultFor(json, 'causal'), themeFor('light')), 'deterministic');
    const [cells, mask] = images(svg);
    assert.ok(svg.includes('mask="url(#attn-cells-mask)"'));
    const zoom = cells.width / n;
    assert.ok(Number.isInteger(zoom) && zoom >= 1 && cells.height === cells.width);
    const w = result.weights[0];
    let worst = 0;
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        const at = ((i * zoom + (zoom >> 1)) * cells.width + j * zoom + (zoom >> 1)) * 4;
        const masked = mask.data[at] === 255;
        assert.equal(masked, j > i, `mask at ${i},${j}`);
        if (!masked) worst = Math.max(worst, Math.abs(theme.scale.invert([...cells.data.subarray(at, at + 3)]) - w[i * n + j]));
      }
    assert.ok(worst <= 0.5 / 255 + 1 / 212, `read-back error ${worst}`);  // 256 levels, 8-bit channel
  });

  it('heads thumbnails stay small for long inputs and keep their labels', () => {
    const n = 300, json = { tokens: Array.from({ length: n }, (_, i) => `t${i}`), attention: ref.randomAttention(2, 2, n, 6, 3) };
    const svg = headsSVG(resultFor(json), themeFor('dark'), { layer: 1, head: 0 });
    const thumbs = images(svg);
    assert.equal(thumbs.length, 4);
    for (const t of thumbs) assert.ok(t.width <= 144 && t.height <= 144, `${t.width}×${t.height}`);
    assert.ok(svg.includes('>Layer 2</text>') && svg.includes('>H2</text>'));
  });
});
