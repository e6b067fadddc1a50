// "Your own model": the reader chooses or drops a Hugging Face model folder; lens.loadModel reads
// it in the page (nothing is uploaded: the files never leave it), then the heads grid, the
// heatmap and the lines view show the model's attention on the reader's text, with fill-mask
// bars for a masked LM and the generation figure for a causal LM. Errors (ModelFormatError's
// message, a missing file) are shown as text and the reader may choose again.
import { tokenLabel } from '../elements/lib/tokens.js';
import { chosenFiles, droppedFiles } from './model-files.js';

const $ = (id) => document.getElementById(id);
const KINDS = { 'causal-lm': 'causal language model', 'masked-lm': 'masked language model', encoder: 'encoder' };
const percent = (p) => `${(100 * p).toFixed(p >= 0.1 ? 1 : 2)} %`;

// The figures' data for one run: every layer's attention, as m.run gives it, with readable tokens.
export function figureData(model, run) {
  return {
    tokens: run.tokens.map(tokenLabel),
    attention: run.layers.map((layer) => layer.attention),
    heads: model.config.heads,
    causal: model.kind === 'causal-lm',
  };
}

// The mask token's text, found by the tokenizer keeping it whole (BERT's [MASK], RoBERTa's <mask>).
function maskToken(model) {
  return ['[MASK]', '<mask>'].find((t) => model.tokenize(t).tokens.includes(t)) ?? '[MASK]';
}

export function setUpOwnModel(lens) {
  const folder = $('own-folder'), files = $('own-files'), drop = $('own-drop');
  const progress = $('own-progress'), status = $('own-status'), errorBox = $('own-error');
  const shown = $('own-figures'), text = $('own-text');
  const figures = ['own-heads', 'own-heatmap', 'own-lines'].map($);
  const fill = $('own-fill'), fillNote = $('own-fill-note'), bars = $('own-fill-bars');
  const writes = $('own-writes'), writer = $('own-generate-slot');
  let model = null, ticket = 0;

  const fail = (message) => {
    errorBox.textContent = message;
    errorBox.hidden = false;
  };

  async function open(list, how) {
    const mine = ++ticket;
    errorBox.hidden = true;
    if (list.length === 0) return fail(`No files ${how}: choose a model folder, or its config.json, model.safetensors and tokenizer.json.`);
    const bytes = list.reduce((sum, f) => sum + f.size, 0);
    progress.value = 0;
    progress.hidden = false;
    status.textContent = `Reading ${list.length} file${list.length === 1 ? '' : 's'} (${(bytes / 2 ** 20).toFixed(1)} MB) in this page…`;
    const started = performance.now();
    let announced = 0;
    const onProgress = ({ stage, fraction }) => {
      if (mine !== ticket) return;
      progress.value = fraction;
      // The live region speaks at most every 10 %; the bar moves on every report.
      if (stage === 'initialise') status.textContent = 'Preparing the model…';
      else if (stage === 'download' && fraction - announced >= 0.1) {
        announced = fraction;
        status.textContent = `Reading the model: ${Math.round(100 * fraction)} %`;
      }
    };
    let loaded;
    try {
      loaded = await lens.loadModel(list, { onProgress });
    } catch (error) {
      if (mine !== ticket) return;
      progress.hidden = true;
      status.textContent = model ? `Still showing ${model.info.name}.` : '';
      return fail(`This model could not be opened: ${error.message}`);
    }
    if (mine !== ticket) return;
    progress.hidden = true;
    model = loaded;
    const { architecture, layers, heads, vocabSize } = model.config;
    const name = list.find((f) => f.webkitRelativePath)?.webkitRelativePath.split('/')[0] ?? architecture;
    status.textContent = `Opened ${name}: ${architecture}, a ${KINDS[model.kind] ?? model.kind} with ${layers} layers × ` +
      `${heads} heads and ${vocabSize.toLocaleString('en')} tokens, in ${Math.round(performance.now() - started)} ms. ` +
      'Edit the text: the figures follow.';
    if (model.kind === 'masked-lm' && !text.dataset.edited)
      text.value = `The cat sat on the ${maskToken(model)} because it was tired.`;
    shown.hidden = false;
    fill.hidden = model.kind !== 'masked-lm';
    writes.hidden = model.kind !== 'causal-lm';
    if (model.kind === 'causal-lm') {
      // A fresh figure per model: <attn-generate> starts writing once connected.
      const figure = document.createElement('attn-generate');
      figure.id = 'own-generate';
      figure.model = name;
      figure.languageModel = model;
      figure.prompt = text.value;
      figure.steps = 16;
      figure.temperature = 0;
      writer.replaceChildren(figure);
    } else {
      writer.replaceChildren();
    }
    show();
  }

  // The reader's text through the model: the attention figures, then the model's own figure.
  function show() {
    if (!model) return;
    let run;
    try {
      run = model.run(text.value);
    } catch (error) {
      return fail(`The model cannot read this text: ${error.message}`);
    }
    errorBox.hidden = true;
    const data = figureData(model, run);
    for (const figure of figures) figure.data = data;
    if (model.kind === 'masked-lm') showFillMask();
    const generate = $('own-generate');
    if (generate && generate.prompt !== text.value) generate.prompt = text.value;
  }

  function showFillMask() {
    let masks;
    try {
      masks = model.fillMask(text.value, { top: 8 });
    } catch (error) {
      bars.replaceChildren();
      fillNote.textContent = `${error.message}. Put ${maskToken(model)} in the text to see the model's guesses.`;
      return;
    }
    const { position, candidates } = masks[0];
    fillNote.textContent = `The model's ${candidates.length} best guesses for token ${position + 1}` +
      (masks.length > 1 ? ` (the first of ${masks.length} masks)` : '') + ', with their probabilities:';
    bars.replaceChildren(...candidates.map(({ token, p }) => {
      const item = document.createElement('li');
      const label = document.createElement('span');
      label.className = 'token';
      label.textContent = tokenLabel(token);  // text, never HTML
      const track = document.createElement('span');
      track.className = 'track';
      track.setAttribute('aria-hidden', 'true');
      const bar = document.createElement('span');
      bar.style.width = `${Math.max(0, Math.min(100, 100 * p))}%`;
      track.append(bar);
      const value = document.createElement('span');
      value.className = 'value';
      value.textContent = percent(p);
      item.append(label, track, value);
      item.dataset.p = String(p);
      return item;
    }));
  }

  folder.addEventListener('change', () => open(chosenFiles(folder), 'in the folder chosen'));
  files.addEventListener('change', () => open(chosenFiles(files), 'chosen'));
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    let list;
    try {
      list = await droppedFiles(e.dataTransfer);
    } catch (error) {
      return fail(`The dropped files could not be read: ${error.message}`);
    }
    open(list, 'in what was dropped');
  });
  // The lines view shows the head the heatmap shows (the grid opens one in the heatmap).
  const [, heatmap, lines] = figures;
  heatmap.addEventListener('change', (e) => {
    if (e.detail.name === 'layer' || e.detail.name === 'head') lines[e.detail.name] = heatmap[e.detail.name];
  });
  let timer = 0;
  text.addEventListener('input', () => {
    text.dataset.edited = 'true';
    clearTimeout(timer);
    timer = setTimeout(show, 200);
  });
}
