// What <attn-generate> draws, without a browser: its options' checks, the view it builds from
// lm.run + lm.generate (every heatmap row and "where it looked" row against the float64
// reference run over the same ids), byte pieces joined into characters, and its SVG export
// (text escaped, the embedded heatmap decoding back to the written rows, same bytes each time).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';

import { PNG } from 'pngjs';

import { init } from 'attnlens';
import { GenerationView, OPTIONS } from '../../web/elements/lib/generation.js';
import { themeFor } from '../../web/elements/lib/theme.js';
import { generateSVG } from '../../web/elements/svg/generate.js';
import { ReferenceModel, readLlama2c } from './llama-reference.js';

const MODEL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/models/stories260K/stories260K.bin');
const PROMPT = 'Tom & <Lily> had a ball 你';

let lm, reference;
before(async () => {
  lm = await (await init()).loadModel('stories260K');
  reference = new ReferenceModel(readLlama2c(readFileSync(MODEL)));
});

const viewOf = (prompt, options) => new GenerationView(lm.run(prompt), lm.generate(prompt, options));
const meanOver = (rows, n, i, heads) => Array.from({ length: i + 1 }, (_, j) => {
  let s = 0;
  for (let h = 0; h < heads; h++) s += rows[(h * n + i) * n + j];
  return s / heads;
});

describe('<attn-generate> options', () => {
  it('parse attribute text and refuse bad values with the option named', () => {
    assert.equal(OPTIONS.steps.parse('12'), 12);
    assert.equal(OPTIONS.temperature.parse('0'), 0);
    assert.equal(OPTIONS.topP.parse(' 0.5 '), 0.5);
    assert.equal(OPTIONS.head.parse('mean'), 'mean');
    assert.equal(OPTIONS.head.parse('3'), 3);
    assert.equal(OPTIONS.prompt.parse(''), '');
    for (const [name, value, pattern] of [
      ['steps', '0', /^steps must be a whole number from 1/], ['steps', 'many', /^steps/], ['steps', 2.5, /^steps/],
      ['temperature', '-1', /^temperature must be a number ≥ 0/], ['temperature', 'NaN', /^temperature/],
      ['topP', '0', /^top-p must be a number in \(0, 1\]/], ['topP', 1.5, /^top-p/],
      ['seed', '-1', /^seed/], ['seed', '1.5', /^seed/], ['layer', 'first', /^layer/], ['head', 'max', /^head/],
    ])
      assert.throws(() => OPTIONS[name].parse(value), (e) => e instanceof RangeError && pattern.test(e.message), `${name}=${value}`);
    assert.throws(() => OPTIONS.model.parse(' '), TypeError);
    assert.throws(() => OPTIONS.prompt.parse(5), TypeError);
  });
});

describe('<attn-generate> view of a generation', () => {
  it('heatmap rows and per-step rows equal the float64 reference over the same ids', () => {
    const v = viewOf(PROMPT, { steps: 16, temperature: 1, topP: 0.9, seed: 3 });
    const ids = [...v.run.ids, ...v.generation.ids];
    assert.deepEqual(v.ids, ids);
    assert.equal(v.size, ids.length - 1);
    const want = reference.run(ids.slice(0, -1)), n = v.size;
    let worst = 0;
    for (const layer of [0, 4])
      for (const head of ['mean', 0, 7]) {
        const m = v.matrix(layer, head);
        for (let i = 0; i < n; i++) {
          const row = head === 'mean' ? meanOver(want.attention[layer], n, i, 8)
            : Array.from(want.attention[layer].subarray((head * n + i) * n, (head * n + i) * n + i + 1));
          for (let j = 0; j < n; j++) worst = Math.max(worst, Math.abs(m[i * n + j] - (j <= i ? row[j] : 0)));
        }
        for (let k = 0; k < v.steps.length; k++)
          assert.deepEqual([...v.looked(k, layer, head)], [...m.subarray((v.promptLength - 1 + k) * n, (v.promptLength + k) * n)].slice(0, v.promptLength + k));
      }
    assert.ok(worst <= 2e-5, `max abs error ${worst}`);
    assert.equal(v.filledRows(-1), v.promptLength - 1);
    assert.equal(v.filledRows(v.steps.length - 1), n);
  });

  it('a character split into byte pieces shows on its last byte; byte pieces are labelled <0xHH>', () => {
    const v = viewOf('你', { steps: 1, temperature: 0 });
    const bytes = [...new TextEncoder().encode('你')];
    assert.deepEqual(v.ids.slice(1, 5), [410, ...bytes.map((b) => b + 3)]);
    assert.deepEqual(v.pieces.slice(2, 5), ['', '', '你']);
    assert.deepEqual(v.labels.slice(2, 5), bytes.map((b) => `<0x${b.toString(16).toUpperCase()}>`));
    assert.equal(v.pieces.join('').startsWith('<s> 你'), true);
  });

  it('refuses a generation whose steps are not at consecutive positions', () => {
    const run = lm.run('Tom'), g = lm.generate('Tom', { steps: 3, temperature: 0 });
    const shifted = { ...g, steps: g.steps.map((s, k) => ({ ...s, position: s.position + (k === 2 ? 1 : 0) })) };
    assert.throws(() => new GenerationView(run, shifted), /step 2 is at position/);
  });
});

describe('<attn-generate> SVG export', () => {
  it('escapes the text, embeds the written rows as an image, and is the same for the same input', () => {
    const v = viewOf(PROMPT, { steps: 8, temperature: 0 });
    const theme = themeFor('light'), n = v.size, k = 3, filled = v.filledRows(k);
    const frame = { current: k, steps: v.steps.length, shown: v.promptLength + k + 1, promptLength: v.promptLength,
      newest: v.promptLength + k, looked: v.looked(k, 0, 'mean'), candidates: v.steps[k].candidates, chosen: v.steps[k].id,
      filledRows: filled, size: n, labels: v.labels, matrix: v.matrix(0, 'mean'), model: 'stories260K', where: 'layer 1, mean of heads' };
    const svg = generateSVG(frame, theme);
    assert.equal(svg, generateSVG(frame, theme));
    assert.ok(!svg.includes('<Lily>') && svg.includes('&lt;'), 'tokens are escaped');
    assert.ok(!/<script|<foreignObject/i.test(svg));
    const [image] = [...svg.matchAll(/<image [^>]*href="data:image\/png;base64,([^"]+)"/g)].map((m) => PNG.sync.read(Buffer.from(m[1], 'base64')));
    const zoom = image.width / n;
    assert.equal(image.height, filled * zoom, 'only the rows written so far');
    const m = frame.matrix;
    for (let i = 0; i < filled; i++)
      for (let j = 0; j <= i; j++) {
        const at = (i * zoom * image.width + j * zoom) * 4;
        const w = theme.scale.invert([image.data[at], image.data[at + 1], image.data[at + 2]]);
        assert.ok(Math.abs(w - m[i * n + j]) < 0.01, `cell (${i}, ${j}): ${w} vs ${m[i * n + j]}`);
      }
    assert.match(generateSVG(frame, theme, { width: 280 }), /<svg [^>]*width="280"/);
  });
});
