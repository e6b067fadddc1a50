// Writes the README's pictures of the aggregate, cross-attention and hidden-token views as SVG,
// light and dark, with the command line's renderer (web/cli/render.js, the figures' own SVG
// code): node scripts/readme-figures.mjs → web/demo/figures/*.svg. Real models where there is
// one (USE-lite, stories260K); the translation pair's weights are illustrative.
import { writeFile } from 'node:fs/promises';

import { render } from '../web/cli/render.js';

const OUT = new URL('../web/demo/figures/', import.meta.url);
const SENTENCE = 'The cat sat on the mat because it was tired.';

// Bahdanau et al.'s Figure 3 pair: each French word mostly looks at one English word.
const ENGLISH = ['The', 'agreement', 'on', 'the', 'European', 'Economic', 'Area', 'was', 'signed', 'in', 'August', '1992', '.'];
const FRENCH = ["L'", 'accord', 'sur', 'la', 'zone', 'économique', 'européenne', 'a', 'été', 'signé', 'en', 'août', '1992', '.'];
const ALIGNED = [0, 1, 2, 3, 6, 5, 4, 7, 7, 8, 9, 10, 11, 12];
const alignment = FRENCH.map((_, i) => {
  const row = ENGLISH.map((__, j) => Math.exp(-2.5 * Math.abs(j - ALIGNED[i])));
  const sum = row.reduce((a, b) => a + b, 0);
  return row.map((x) => x / sum);
});

const FIGURES = {
  'heads-mean': [{ model: 'use-lite', text: SENTENCE }, { figure: 'heatmap', layer: 1, head: 'mean' }],
  rollout: [{ model: 'use-lite', text: SENTENCE }, { figure: 'heatmap', layer: 'rollout' }],
  cross: [{ queryTokens: FRENCH, keyTokens: ENGLISH, attention: alignment }, { figure: 'heatmap' }],
  hidden: [{ model: 'stories260K', text: 'Lily saw a big dog. She was happy.' },
    { figure: 'heatmap', layer: 2, head: 'mean', hide: '<s>', renormalize: true }],
};

for (const [name, [data, options]] of Object.entries(FIGURES))
  for (const theme of ['light', 'dark']) {
    const svg = await render(data, { ...options, theme, width: 420 });
    await writeFile(new URL(`${name}-${theme}.svg`, OUT), svg);
    console.log(`web/demo/figures/${name}-${theme}.svg: ${(svg.length / 1024).toFixed(1)} KB`);
  }
