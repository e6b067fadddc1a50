// <attn-pipeline>: the steps QKᵀ → ÷√d_k → mask → softmax → A → A·V, each a small matrix view,
// for the author's own small Q, K, V. Scale (including "no scaling"), temperature and mask
// controls show why attention divides by √d_k: without it, scores grow with d_k and the
// softmax saturates (one weight near 1). The engine computes QKᵀ, A and A·V.
import { fmt, isActivation, navigate, quote } from './lib/a11y.js';
import { AttnElement, STEPS } from './lib/base.js';
import { css, textOn } from './lib/color.js';
import { computeSteps, masksFor } from './lib/compute.js';
import { DataError } from './lib/data.js';
import { h } from './lib/dom.js';
import { NOTHING_HIDDEN, hidePlan, pickCells } from './lib/filter.js';
import { clip } from './lib/export.js';
import { MASKED_STEPS, NUMBERS_UP_TO, TITLES, num, pipelineSteps, pipelineSVG, stepColour } from './svg/pipeline.js';

const STYLE = `
.tabs { display: flex; flex-wrap: wrap; gap: 4px; margin: 4px 0 8px; }
.tabs [role="tab"][aria-selected="true"] { background: var(--attn-accent); color: var(--attn-bg); border-color: var(--attn-accent); }
.flow { display: flex; flex-wrap: wrap; gap: 10px 6px; align-items: flex-start; }
.arrow { align-self: center; color: var(--attn-muted); }
figure { margin: 0; padding: 4px; border: 1px solid transparent; border-radius: 4px; cursor: pointer; max-width: 100%; overflow-x: auto; }
figure.current { border-color: var(--attn-accent); background: var(--attn-surface); }
figcaption { font-weight: 600; margin-bottom: 2px; }
table { border-collapse: collapse; font-size: 11px; }
th { font-weight: 400; color: var(--attn-muted); padding: 0 3px; max-width: 6ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
th[scope="row"] { text-align: right; cursor: pointer; }
td { min-width: 2.6em; height: 1.7em; padding: 0 3px; text-align: right; font-variant-numeric: tabular-nums; }
thead td { min-width: 0; height: auto; }
.dense td { min-width: 8px; width: 8px; height: 8px; padding: 0; font-size: 0; }
.dense thead { display: none; }
tr.query th { color: var(--attn-fg); font-weight: 700; }
tr.query td { box-shadow: inset 0 2px 0 var(--attn-focus), inset 0 -2px 0 var(--attn-focus); }
td.masked { background: repeating-linear-gradient(135deg, var(--attn-mask-bg) 0 3px, var(--attn-mask-line) 3px 4px); color: var(--attn-fg); }
.explain { margin: 8px 0 4px; overflow-wrap: anywhere; }
.meter { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; color: var(--attn-muted); }
.meter .track { width: 120px; height: 8px; background: var(--attn-low); border: 1px solid var(--attn-line); position: relative; }
.meter .fill { position: absolute; inset: 0; background: var(--attn-accent); transform-origin: left; }
input[type="range"] { width: 110px; accent-color: var(--attn-accent); }
`;


export class AttnPipeline extends AttnElement {
  static styles = [STYLE];
  static maxTokens = 32;
  static recomputeOn = ['head', 'layer'];
  /** The steps are one head's: no mean/max/rollout here. */
  static aggregates = false;

  setup(body) {
    this.scalePicker = h('select', { 'aria-label': 'Scale' },
      h('option', { value: 'auto' }, '÷√d_k'), h('option', { value: 'none' }, 'no scaling'));
    this.temperatureInput = h('input', { type: 'range', min: -2, max: 2, step: 0.05, value: 0, 'aria-label': 'Temperature' });
    this.temperatureText = h('span', { class: 'num' }, '1.00');
    this.maskPicker = h('select', { 'aria-label': 'Mask' }, ...['none', 'causal', 'padding', 'causal padding']
      .map((m) => h('option', { value: m }, m === 'causal padding' ? 'causal + padding' : m)));
    this.queryPicker = h('select', { 'aria-label': 'Query row' });
    this.controls.append(
      h('label', {}, 'Scale', this.scalePicker),
      h('label', {}, 'Temperature', this.temperatureInput, this.temperatureText),
      h('label', {}, 'Mask', this.maskPicker),
      h('label', {}, 'Query', this.queryPicker));
    this.scalePicker.addEventListener('change', () => this.setState('scale', this.scalePicker.value === 'auto' || this.scalePicker.value === 'none' ? this.scalePicker.value : Number(this.scalePicker.value)));
    this.temperatureInput.addEventListener('input', () => this.setState('temperature', Number((2 ** Number(this.temperatureInput.value)).toFixed(3))));
    this.maskPicker.addEventListener('change', () => this.setState('mask', this.maskPicker.value));
    this.queryPicker.addEventListener('change', () => this.setState('query', Number(this.queryPicker.value)));

    this.tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Steps (←/→ step, ↑/↓ query)' },
      STEPS.map((s, i) => h('button', { type: 'button', role: 'tab', 'data-step': s, id: `tab-${s}` }, `${i + 1} ${TITLES[s]}`)));
    this.flow = h('div', { class: 'flow', role: 'tabpanel', 'aria-labelledby': 'tab-weights' });
    this.explain = h('p', { class: 'explain', 'aria-live': 'polite' });
    this.meterFill = h('span', { class: 'fill' });
    this.meterText = h('span', { class: 'num' });
    this.meter = h('div', { class: 'meter' }, 'Largest weight of the query row', h('span', { class: 'track' }, this.meterFill), this.meterText);
    body.append(this.tabs, this.flow, this.explain, this.meter);

    this.tabs.addEventListener('click', (e) => {
      const tab = e.target.closest('[role="tab"]');
      if (tab) this.setState('step', tab.dataset.step);
    });
    this.tabs.addEventListener('keydown', (e) => {
      const at = STEPS.indexOf(this.step);
      if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
        e.preventDefault();
        const n = this.result.n;
        this.setState('query', Math.max(0, Math.min(n - 1, this.query + (e.key === 'ArrowDown' ? 1 : -1))));
        return;
      }
      const to = isActivation(e) ? at : navigate(e.key, at, STEPS.length);
      if (to === null) return;
      e.preventDefault();
      this.setState('step', STEPS[to]);
      this.tabs.children[to].focus();
    });
    this.flow.addEventListener('click', (e) => {
      const row = e.target.closest('tr[data-row]');
      if (row) this.setState('query', Number(row.dataset.row));
      const fig = e.target.closest('figure');
      if (fig) this.setState('step', fig.dataset.step);
    });
  }

  compute(lens, data, state) {
    if (data.kind === 'attention')
      throw new DataError('attn-pipeline needs vectors (Q, K, V, or X with W_Q, W_K, W_V): precomputed weights have no scores to show');
    if (data.cross)
      throw new DataError('attn-pipeline shows self-attention step by step: use attn-heatmap or attn-bars for queryTokens/keyTokens');
    const head = Math.min(state.head, data.heads - 1);
    const plan = hidePlan(data, state.hide, state.renormalize);
    if (!plan) return { ...computeSteps(lens, data, state, head), layers: 1, heads: data.heads, hidden: NOTHING_HIDDEN };
    return { ...hiddenSteps(lens, data, state, head, plan), layers: 1, heads: data.heads };
  }

  /** The matrix shown at each step: { scores, scale, mask, softmax, weights, output }. */
  get steps() {
    return this.result && pipelineSteps(this.result);
  }

  get weights() {
    return this.result?.weights ?? null;
  }

  render(result) {
    const { tokens, n, dV } = result;
    this.#syncControls(result);
    const steps = this.steps;
    const dense = n > NUMBERS_UP_TO;
    const figures = STEPS.map((step) => {
      const values = steps[step], cols = step === 'output' ? dV : n;
      const colour = this.#colour(step, values);
      // The corner cell names nothing: a td, not an empty header (axe: empty-table-header).
      const head = h('thead', {}, h('tr', {}, h('td', {}),
        Array.from({ length: cols }, (_, j) => h('th', { scope: 'col', title: step === 'output' ? `dimension ${j + 1}` : tokens[j] },
          step === 'output' ? String(j + 1) : clip(tokens[j], 6))),
        step === 'softmax' ? h('th', { scope: 'col' }, 'Σ') : null));
      const rows = tokens.map((t, i) => h('tr', { 'data-row': i },
        h('th', { scope: 'row', title: t }, clip(t, 8)),
        Array.from({ length: cols }, (_, j) => {
          const x = values[i * cols + j];
          const td = h('td', {}, num(x));
          if (x === -Infinity || (MASKED_STEPS.has(step) && this.isMasked(i, j))) td.className = 'masked';
          else {
            const bg = colour(x);
            td.style.background = css(bg);
            td.style.color = textOn(bg);
          }
          td.title = `${tokens[i]} · ${step === 'output' ? `dimension ${j + 1}` : tokens[j]}: ${num(x)}`;
          return td;
        }),
        step === 'softmax' ? h('td', {}, num(result.sums[i])) : null));
      return h('figure', { 'data-step': step },
        h('figcaption', {}, TITLES[step]),
        h('table', { class: dense ? 'dense' : '', 'aria-label': `${TITLES[step]}: ${n} rows` }, head, h('tbody', {}, rows)));
    });
    this.flow.replaceChildren(...figures.flatMap((f, i) => (i ? [h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→'), f] : [f])));
    this.#highlight();
  }

  stateChanged(name) {
    if (name !== 'query' && name !== 'step') return true;
    this.#syncControls(this.result);
    this.#highlight();
    return false;
  }

  #colour(step, values) {
    return stepColour(this.theme, step, values);
  }

  #syncControls(r) {
    const scale = this.scale;
    if (typeof scale === 'number' && ![...this.scalePicker.options].some((o) => o.value === String(scale)))
      this.scalePicker.append(h('option', { value: scale }, `× ${scale}`));
    this.scalePicker.value = String(scale);
    this.temperatureInput.value = String(Math.log2(this.temperature));
    this.temperatureText.textContent = this.temperature.toFixed(2);
    this.maskPicker.value = this.mask;
    if (this.queryPicker.options.length !== r.n || this.queryPicker.tokens !== r.tokens) {
      this.queryPicker.tokens = r.tokens;
      this.queryPicker.replaceChildren(...r.tokens.map((t, i) => h('option', { value: i }, `${i + 1}: ${clip(t, 16)}`)));
    }
    this.queryPicker.value = String(this.query);
  }

  #highlight() {
    const r = this.result, q = this.query, step = this.step;
    for (const tab of this.tabs.children) {
      const on = tab.dataset.step === step;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
    }
    this.flow.setAttribute('aria-labelledby', `tab-${step}`);
    for (const fig of this.flow.querySelectorAll('figure')) fig.classList.toggle('current', fig.dataset.step === step);
    for (const tr of this.flow.querySelectorAll('tr[data-row]')) tr.classList.toggle('query', Number(tr.dataset.row) === q);
    const n = r.n, row = (m) => m.subarray(q * n, (q + 1) * n);
    const max = Math.max(...row(r.weights));
    this.meterFill.style.transform = `scaleX(${max})`;
    this.meterText.textContent = `${fmt(max)}${max > 0.95 ? ' (saturated: softmax is almost one-hot)' : ''}`;
    this.explain.textContent = this.#explanation(r, q, step, row);
  }

  #explanation(r, q, step, row) {
    const tok = quote(r.tokens[q]);
    const finite = [...row(r.masked)].filter(Number.isFinite);
    const spread = (m) => { const v = [...row(m)].filter(Number.isFinite); return v.length ? Math.max(...v) - Math.min(...v) : 0; };
    const best = row(r.weights).reduce((b, w, j) => (w > row(r.weights)[b] ? j : b), 0);
    const partial = r.hidden.count > 0 && !r.hidden.renormalized;  // hidden keys still take their share
    const sum = (values) => values.reduce((a, b) => a + b, 0);
    const scaleText = this.scale === 'auto' ? `1/√${r.dK} = ${fmt(1 / Math.sqrt(r.dK), 3)}` : this.scale === 'none' ? '1 (no scaling)' : String(this.scale);
    switch (step) {
      case 'scores': return `QKᵀ: the dot product of each query with every key. Row ${tok} spans ${num(spread(r.scores))}. With d_k = ${r.dK} random dimensions, such sums grow like √d_k.`;
      case 'scale': return `Scores × ${scaleText}${this.temperature !== 1 ? `, ÷ temperature ${fmt(this.temperature)}` : ''} = × ${fmt(r.scale, 4)}. Row ${tok} now spans ${num(spread(r.scaled))}: the wider the spread, the more the softmax picks a single key.`;
      case 'mask': return `Masked scores become −∞, so the softmax gives them weight 0. Row ${tok} keeps ${finite.length} of ${r.n} keys (mask: ${this.mask}).`;
      case 'softmax': return `exp(s − row max): every kept score becomes a positive number, the largest 1. Row ${tok} sums to ${num(r.sums[q])}${partial ? ' (with the hidden tokens\' exps, which are not shown)' : ''}.`;
      case 'weights': return `A: each exp divided by its row sum, so every row adds up to 1${partial ? ` with the hidden tokens' weights; the shown row ${tok} adds up to ${fmt(sum(row(r.weights)))}` : ''}. ${tok} puts ${fmt(row(r.weights)[best])} on ${quote(r.tokens[best])}.`;
      default: return `A·V: each output row mixes the value vectors (d_v = ${r.dV}) with its weights; row ${tok} is mostly the value of ${quote(r.tokens[best])}.`;
    }
  }

  svg(result, theme, options) {
    return pipelineSVG(result, theme, { query: this.query, mask: this.mask }, options);
  }
}

/**
 * The steps with tokens hidden (filter.js hidePlan; the pipeline is self-attention, so rows and
 * columns lose the same tokens). Without `renormalize` every step is computed over all tokens and
 * the hidden rows and columns are left out of the picture: the softmax sums (Σ) and A keep the
 * hidden keys' share, so shown rows of A add up to less than 1, and A·V is the model's output.
 * With `renormalize` the hidden keys are masked like padding before the softmax (−∞ at the mask
 * step), which is the same as renormalising the kept weights: rows of A add up to 1 and A·V mixes
 * only the kept values.
 */
function hiddenSteps(lens, data, state, head, { keepQ: keep, hidden }) {
  const { n } = data;
  let input = data, inputState = state;
  if (state.renormalize) {
    const base = masksFor(data, state.mask).keyMask ?? new Uint8Array(n).fill(1);
    const keyMask = Uint8Array.from(base, (x, j) => (keep.includes(j) ? x : 0));
    input = { ...data, keyMask };
    inputState = { ...state, mask: masksFor(data, state.mask).causal ? 'causal padding' : 'padding' };
  }
  const all = computeSteps(lens, input, inputState, head);
  const square = (m) => pickCells(m, n, keep, keep), rows = (m, width) => pickCells(m, width, keep);
  const masks = masksFor(data, state.mask);
  return {
    ...all, tokens: keep.map((i) => data.tokens[i]), n: keep.length,
    masks: { ...masks, keyMask: masks.keyMask ? Uint8Array.from(keep, (j) => masks.keyMask[j]) : null },
    q: rows(all.q, all.dK), k: rows(all.k, all.dK), v: rows(all.v, all.dV),
    scores: square(all.scores), scaled: square(all.scaled), masked: square(all.masked), exp: square(all.exp),
    sums: rows(all.sums, 1), weights: square(all.weights), output: rows(all.output, all.dV),
    hidden, kept: { queries: keep, keys: keep },
  };
}

if (globalThis.customElements && !customElements.get('attn-pipeline')) customElements.define('attn-pipeline', AttnPipeline);
