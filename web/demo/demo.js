// The demo page: the figures are plain <attn-*> tags; this module supplies the seeded random data
// (honestly labelled on the page), shows the model's loading progress, and wires the page's own
// controls to the figures' API.
import { loadEngine } from '../elements/index.js';
import { setUpOwnModel } from './own-model.js';

// Seeded uniform numbers in [−1, 1): xorshift32.
function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return (s / 2 ** 32) * 2 - 1;
  };
}

const round = (x) => Math.round(x * 100) / 100;
const matrix = (next, rows, cols) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => round(next())));

// A seed per word, so a word keeps its vectors while the reader edits the others.
function wordSeed(word, salt) {
  let h = 2166136261 ^ salt;
  for (const ch of word.toLowerCase()) h = Math.imul(h ^ ch.codePointAt(0), 16777619);
  return h >>> 0;
}

function randomVectors(tokens, dK) {
  const row = (t, salt) => matrix(random(wordSeed(t, salt)), 1, dK)[0];
  return { tokens, Q: tokens.map((t) => row(t, 1)), K: tokens.map((t) => row(t, 2)), V: tokens.map((t) => row(t, 3)) };
}

const $ = (id) => document.getElementById(id);

// 2. The pipeline: random Q, K, V of the chosen width.
function pipelineData(dK) {
  const next = random(1234 + dK);
  const tokens = ['we', 'need', 'more', 'data', 'now', '.'];
  return { tokens, Q: matrix(next, 6, dK), K: matrix(next, 6, dK), V: matrix(next, 6, 3) };
}

function setUpPipeline() {
  const pipeline = $('pipeline'), select = $('dk');
  const update = () => {
    const dK = Number(select.value);
    pipeline.data = pipelineData(dK);
    $('dk-note').textContent = `random scores spread about ±√${dK} ≈ ±${Math.sqrt(dK).toFixed(1)} before scaling`;
  };
  select.addEventListener('change', update);
  update();
}

// 0. The model figures (1, 3, 4) read the sentence box; the page shows the model's download
// progress (the figures share the one cached model).
function setUpModel(lens) {
  const input = $('model-text'), progress = $('model-progress'), status = $('model-status');
  const figures = [...document.querySelectorAll('.model-figure')];
  const onProgress = ({ stage, loaded, total }) => {
    if (stage === 'download' && total > 0) {
      progress.value = loaded / total;
      status.textContent = `Loading the model: ${(loaded / 2 ** 20).toFixed(1)} of ${(total / 2 ** 20).toFixed(1)} MB`;
    } else if (stage === 'initialise') {
      status.textContent = 'Preparing the model…';
    }
  };
  const started = performance.now();
  lens.loadModel(undefined, { onProgress }).then((model) => {
    progress.value = 1;
    progress.hidden = true;
    const { layers, heads } = model.info ?? {};
    status.textContent = `Model ready in ${Math.round(performance.now() - started)} ms` +
      (layers ? ` (${layers} layers × ${heads} heads)` : '') + '. Edit the sentence: the figures follow.';
  }, (error) => {
    progress.hidden = true;
    status.textContent = `The model could not be loaded: ${error.message}`;
  });
  let timer = 0;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    // An empty sentence is the model's error ("text is empty"), shown inside each figure.
    timer = setTimeout(() => {
      for (const figure of figures) figure.setAttribute('text', input.value);
    }, 120);
  });
  // Figure 3 names the layer and head it shows.
  const heatmap = $('heatmap'), note = $('heatmap-note');
  heatmap.addEventListener('change', (e) => {
    if (e.detail.name === 'layer' || e.detail.name === 'head')
      note.textContent = `Real attention of Universal Sentence Encoder lite, layer ${heatmap.layer + 1}, head ${heatmap.head + 1}.`;
  });
}

// 3b. The mask heatmap's buttons drive its `mask` property; its `change` events keep them in sync.
function setUpMaskButtons() {
  const heatmap = $('mask-heatmap');
  const buttons = [...document.querySelectorAll('button.mask')];
  const sync = () => buttons.forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.mask === heatmap.mask)));
  buttons.forEach((b) => b.addEventListener('click', () => { heatmap.mask = b.dataset.mask; }));
  heatmap.addEventListener('change', (e) => e.detail.name === 'mask' && sync());
}

// 4b. The text figure's colour-scale buttons drive its `colorScale` property.
{
  const text = $('text'), buttons = [...document.querySelectorAll('button.color-scale')];
  const sync = () => buttons.forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.scale === text.colorScale)));
  buttons.forEach((b) => b.addEventListener('click', () => { text.colorScale = b.dataset.scale; }));
  text.addEventListener('change', (e) => e.detail.name === 'color-scale' && sync());
}

// 5. A large heatmap on demand.
function setUpBig() {
  const button = $('big'), heatmap = $('big-heatmap');
  button.addEventListener('click', async () => {
    const n = 2048, dK = 16, next = random(2048);
    const flat = () => Float32Array.from({ length: n * dK }, next);
    button.disabled = true;
    heatmap.hidden = false;
    heatmap.data = { tokens: Array.from({ length: n }, (_, i) => `t${i + 1}`), Q: flat(), K: flat(), V: flat(), dK };
    await heatmap.updateComplete;
    $('big-note').textContent = `${n} × ${n} = ${(n * n).toLocaleString('en')} weights (random vectors, seeded), computed and drawn.`;
  });
}

// 6. The playground: tokens → random vectors in the JSON box; the JSON box → the figures.
function setUpPlayground() {
  const tokensInput = $('play-tokens'), dK = $('play-dk'), json = $('play-json'), status = $('play-status');
  const figures = ['play-bars', 'play-heatmap', 'play-pipeline'].map($);
  const show = () => {
    let data;
    try {
      data = JSON.parse(json.value);
    } catch (error) {
      status.textContent = `The JSON does not parse: ${error.message}`;
      return;
    }
    status.textContent = 'Vectors you can edit (random until you change them). Not from a model.';
    for (const figure of figures) figure.data = data;
  };
  const fromTokens = () => {
    const tokens = tokensInput.value.trim().split(/\s+/u).filter(Boolean);
    const data = randomVectors(tokens, Number(dK.value));
    json.value = `{"tokens": ${JSON.stringify(data.tokens)},\n` +
      ['Q', 'K', 'V'].map((k) => ` "${k}": ${JSON.stringify(data[k])}`).join(',\n') + '}';
    show();
  };
  tokensInput.addEventListener('input', fromTokens);
  dK.addEventListener('change', fromTokens);
  json.addEventListener('input', show);
  fromTokens();
}

// 7. The writing model: a new seed writes another story from the same prompt.
function setUpGenerate() {
  const figure = $('generate'), note = $('generate-note');
  const say = () => { note.textContent = `Seed ${figure.seed}.`; };
  $('generate-seed').addEventListener('click', () => {
    figure.seed += 1;
    say();
  });
  say();
}

async function main() {
  setUpPipeline();
  setUpMaskButtons();
  setUpBig();
  setUpPlayground();
  setUpGenerate();
  const lens = await loadEngine();
  setUpModel(lens);
  setUpOwnModel(lens);
  const builds = { relaxed: 'WebAssembly relaxed SIMD', simd: 'WebAssembly SIMD128', scalar: 'scalar WebAssembly' };
  $('engine').textContent = `Engine: ${builds[lens.build]} (${lens.arch}), running on this page.`;
}

main().catch((error) => {
  $('engine').textContent = `Could not start the engine: ${error.message}`;
});
