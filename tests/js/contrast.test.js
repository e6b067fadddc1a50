// Text on coloured cells (the pipeline's numbers, in the page and in its SVG) against the
// colour scales of both themes: the text colour textOn picks has a WCAG contrast of at least
// 4.5:1 on every colour a cell can take, and the scales stay perceptually ordered (luminance
// monotone from the low colour to each end). The contrast formula is WCAG 2.1's, written out
// here again rather than imported, so that an error in color.js's copy cannot hide.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { contrast, signedScale, textOn } from '../../web/elements/lib/color.js';
import { themeFor } from '../../web/elements/lib/theme.js';

const channel = (c) => { const s = c / 255; return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; };
const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
const rgbOf = (text) => (text === '#000' ? [0, 0, 0] : [255, 255, 255]);
const STEPS = 512;

function assertMonotone(values, what) {
  const sign = Math.sign(values.at(-1) - values[0]);
  assert.notEqual(sign, 0, `${what}: the ends differ in luminance`);
  for (let i = 1; i < values.length; i++)
    assert.ok(sign * (values[i] - values[i - 1]) >= -1e-12, `${what}: luminance turns back at step ${i}`);
}

for (const name of ['light', 'dark']) {
  describe(`colour scales, ${name} theme`, () => {
    const theme = themeFor(name);
    const weight = Array.from({ length: STEPS + 1 }, (_, i) => theme.scale.rgb(i / STEPS));
    const signed = signedScale(theme.negative, theme.low, theme.high, 1);
    const positive = Array.from({ length: STEPS + 1 }, (_, i) => signed.rgb(i / STEPS));
    const negative = Array.from({ length: STEPS + 1 }, (_, i) => signed.rgb(-i / STEPS));

    it('text on every cell colour reaches 4.5:1', () => {
      let worst = Infinity;
      for (const rgb of [...weight, ...positive, ...negative]) {
        const r = ratio(rgbOf(textOn(rgb)), rgb);
        worst = Math.min(worst, r);
        assert.ok(r >= 4.5, `${textOn(rgb)} on rgb(${rgb}) is ${r.toFixed(2)}:1`);
        assert.ok(Math.abs(contrast(rgbOf(textOn(rgb)), rgb) - r) < 1e-9, 'color.js contrast agrees with WCAG');
      }
      assert.ok(worst >= 4.58 - 1e-9, `worst ${worst}`);
    });

    it('the scales are perceptually ordered: luminance monotone from the low colour to each end', () => {
      assertMonotone(weight.map(luminance), 'weights');
      assertMonotone(positive.map(luminance), 'positive side');
      assertMonotone(negative.map(luminance), 'negative side');
    });
  });
}
