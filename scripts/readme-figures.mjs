// Writes the pictures of README.md and docs/ as SVG, light and dark, with the command line's
// renderer (web/cli/render.js, i.e. the figures' own SVG code) and, for <attn-generate> (which
// the command line cannot draw), the element's own pure SVG function on a real generation:
//   node scripts/readme-figures.mjs → docs/img/*.svg
// overview-*.svg (the README's picture: heatmap, bars and lines side by side), one small picture
// per figure (heatmap, bars, heads, pipeline, lines, text, generate) and the views of docs/figures.md
// (mean over heads, rollout, cross-attention, hidden tokens). Real models where there is one
// (USE-lite, stories260K); the translation pair's weights and the pipeline's vectors are
// illustrative. <attn-compare>'s pictures are its Chromium snapshots (tests/browser/snapshots/).
import { mkdir, writeFile } from 'node:fs/promises';

import { init } from '../web/attnlens.js';
import { GenerationView } from '../web/elements/lib/generation.js';
import { themeFor } from '../web/elements/lib/theme.js';
import { generateSVG } from '../web/elements/svg/generate.js';
import { render } from '../web/cli/render.js';

const OUT = new URL('../docs/img/', import.meta.url);
const SENTENCE = 'The cat sat on the mat because it was tired.';
const USE = { model: 'use-lite', text: SENTENCE };
const THEMES = ['light', 'dark'];

// Bahdanau et al.'s Figure 3 pair: each French word mostly looks at one English word.
const ENGLISH = ['The', 'agreement', 'on', 'the', 'European', 'Economic', 'Area', 'was', 'signed', 'in', 'August', '1992', '.'];
const FRENCH = ["L'", 'accord', 'sur', 'la', 'zone', 'économique', 'européenne', 'a', 'été', 'signé', 'en', 'août', '1992', '.'];
const ALIGNED = [0, 1, 2, 3, 6, 5, 4, 7, 7, 8, 9, 10, 11, 12];
const alignment = FRENCH.map((_, i) => {
  const row = ENGLISH.map((__, j) => Math.exp(-2.5 * Math.abs(j - ALIGNED[i])));
  const sum = row.reduce((a, b) => a + b, 0);
  return row.map((x) => x / sum);
});

// Four tokens of width 2 for the pipeline's steps (numbers small enough to read in each cell).
const PIPELINE = { tokens: ['the', 'cat', 'sat', 'down'], Q: [[1, 0], [0.5, 1], [0, 1], [1, 1]], K: [[1, 0.2], [0.3, 1], [0, 0.8], [0.9, 0.6]] };

// name → [data, options]; each is written light and dark at `width` CSS px.
const FIGURES = {
  heatmap: [USE, { figure: 'heatmap', layer: 1, head: 1, query: 'it', width: 300 }],
  bars: [USE, { figure: 'bars', layer: 1, head: 1, query: 'it', width: 300 }],
  heads: [USE, { figure: 'heads', width: 300 }],
  pipeline: [PIPELINE, { figure: 'pipeline', step: 'softmax', width: 300 }],
  lines: [USE, { figure: 'lines', layer: 1, heads: 'all', query: 'it', width: 300 }],
  text: [USE, { figure: 'text', layer: 1, head: 1, query: 'it', width: 300 }],
  'heads-mean': [USE, { figure: 'heatmap', layer: 1, head: 'mean', width: 420 }],
  rollout: [USE, { figure: 'heatmap', layer: 'rollout', width: 420 }],
  cross: [{ queryTokens: FRENCH, keyTokens: ENGLISH, attention: alignment }, { figure: 'heatmap', width: 420 }],
  hidden: [{ model: 'stories260K', text: 'Lily saw a big dog. She was happy.' },
    { figure: 'heatmap', layer: 2, head: 'mean', hide: '<s>', renormalize: true, width: 420 }],
};
const OVERVIEW = ['heatmap', 'bars', 'lines'];

await mkdir(OUT, { recursive: true });
const written = {};
async function write(name, svg) {
  await writeFile(new URL(`${name}.svg`, OUT), svg);
  console.log(`docs/img/${name}.svg: ${(svg.length / 1024).toFixed(1)} KB`);
}

for (const [name, [data, options]] of Object.entries(FIGURES))
  for (const theme of THEMES) {
    const svg = await render(data, { ...options, theme });
    written[`${name}-${theme}`] = svg;
    await write(`${name}-${theme}`, svg);
  }

// <attn-generate>: stories260K writes 12 tokens (a fixed seed, as the element's default), shown
// at its last step, layer 1, mean of heads; the frame is built as the element builds it.
const lens = await init();
const lm = await lens.loadModel('stories260K');
const prompt = 'Once upon a time, there was a little dog';
const view = new GenerationView(lm.run(prompt), lm.generate(prompt, { steps: 12, temperature: 0.8, topP: 0.9, seed: 1 }));
const k = view.steps.length - 1, step = view.steps[k], layer = 0, head = 'mean';
const frame = {
  current: k, steps: view.steps.length, layer, head, shown: view.promptLength + k + 1, promptLength: view.promptLength,
  newest: view.promptLength + k, token: step.token, looked: view.looked(k, layer, head), candidates: step.candidates,
  chosen: step.id, filledRows: view.filledRows(k), size: view.size,
  labels: view.labels, matrix: view.matrix(layer, head), model: 'stories260K', where: 'layer 1, mean of heads',
};
for (const theme of THEMES) await write(`generate-${theme}`, generateSVG(frame, themeFor(theme), { width: 300 }));

// The README's picture: three figures' SVG documents nested side by side in one document (ids
// prefixed per figure, so the embedded cell images and hatch patterns stay apart).
function nest(svg, prefix, x) {
  const body = svg.replace(/^<\?xml[^>]*>\s*/, '')
    .replace(/\bid="([^"]+)"/g, `id="${prefix}-$1"`)
    .replace(/url\(#([^)]+)\)/g, `url(#${prefix}-$1)`)
    .replace(/href="#([^"]+)"/g, `href="#${prefix}-$1"`);
  const [, width, height] = body.match(/^<svg[^>]*?\swidth="([\d.]+)"\s+height="([\d.]+)"/) ?? [];
  if (!width) throw new Error(`readme-figures: cannot read the size of the ${prefix} figure`);
  return { markup: body.replace(/^<svg/, `<svg x="${x}" y="0"`), width: Number(width), height: Number(height) };
}
for (const theme of THEMES) {
  let x = 0, height = 0;
  const parts = OVERVIEW.map((name) => {
    const part = nest(written[`${name}-${theme}`], name, x);
    x += part.width + 12;
    height = Math.max(height, part.height);
    return part.markup;
  });
  const bg = theme === 'dark' ? themeFor('dark').bg : themeFor('light').bg;
  const fill = Array.isArray(bg) ? `rgb(${bg.slice(0, 3).join(', ')})` : bg;
  await write(`overview-${theme}`, `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(x - 12)}" ` +
    `height="${Math.ceil(height)}" viewBox="0 0 ${Math.ceil(x - 12)} ${Math.ceil(height)}" role="img"><title>attnlens: ` +
    `a heatmap, bars and the lines view of USE-lite's layer 2 on “${SENTENCE}”</title>` +
    `<rect width="100%" height="100%" fill="${fill}"/>${parts.join('')}</svg>\n`);
}
