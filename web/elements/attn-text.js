// <attn-text>: the tokens as flowing, wrapping text (the tokenizer's spaces kept, lib/token-text.js),
// each token's background tinted by its weight from the selected token (direction "to": the
// weight it receives from the selected query; "from": the weight it gives the selected token), on
// the color-scale, with a text colour that keeps ≥ 4.5:1 on its tint. Hover, focus or tap a
// token to select it; arrow keys move; the readout gives the exact weight. Tokens are text nodes.
import { fmt, isActivation, navigate, quote } from './lib/a11y.js';
import { AttnElement } from './lib/base.js';
import { colorPositions, largestWeight } from './lib/color-scale.js';
import { css } from './lib/color.js';
import { isAggregate, maskMatrix } from './lib/compute.js';
import { readableOn } from './lib/contrast.js';
import { DataError } from './lib/data.js';
import { h } from './lib/dom.js';
import { drawScaleLegend } from './lib/scale-legend.js';
import { selectionLabel } from './lib/selection.js';
import { tokenPieces } from './lib/token-text.js';
import { parseDirection, textSVG, textTints } from './svg/text.js';

const STYLE = `
.text { margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.9; font-size: var(--attn-text-size, 15px); max-height: var(--attn-text-height, none); overflow-y: auto; }
.tok { border-radius: 3px; padding: 1px 1px; cursor: pointer; -webkit-box-decoration-break: clone; box-decoration-break: clone; }
.tok:focus { outline: none; }
.tok:focus-visible, .tok[aria-selected="true"] { outline: 2px solid var(--attn-accent); outline-offset: 1px; }
.tok:focus-visible { outline-color: var(--attn-focus); }
.tok.masked { border-bottom: 2px dotted var(--attn-mask-line); }
.readout { min-height: 1.4em; margin: 4px 0; color: var(--attn-muted); overflow-wrap: anywhere; }
.readout .value { color: var(--attn-fg); }
.legend { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 4px 10px; color: var(--attn-muted); font-size: 11px; }
.legend .masked-key { border-bottom: 2px dotted var(--attn-mask-line); }
`;

export class AttnText extends AttnElement {
  static styles = [STYLE];

  static get observedAttributes() {
    return [...super.observedAttributes, 'direction'];
  }

  #direction = 'to';
  #spans = null;        // { tokens, list: the token spans }
  #positions = null;    // { key, weights, positions, masked }
  #hover = -1;          // the token under the pointer or keyboard (for the readout)

  setup(body) {
    this.textBox = h('p', { class: 'text', part: 'text', role: 'listbox', 'aria-orientation': 'horizontal' });
    this.readout = h('div', { class: 'readout', 'aria-hidden': 'true' });
    this.scaleBox = h('span', { class: 'scale' });
    this.maskedKey = h('span', { class: 'masked-key', hidden: true }, 'masked');
    this.legend = h('div', { class: 'legend', part: 'legend', 'aria-hidden': 'true' }, this.scaleBox, this.maskedKey);
    body.append(this.textBox, this.readout, this.legend);
    const indexOf = (e) => {
      const span = e.target.closest?.('.tok');
      return span ? Number(span.dataset.index) : -1;
    };
    // Hover, a tap (click) and focus all select; the pointer's selection is the reader's too.
    this.textBox.addEventListener('pointerover', (e) => this.#pick(indexOf(e)));
    this.textBox.addEventListener('click', (e) => this.#pick(indexOf(e)));
    this.textBox.addEventListener('focusin', (e) => this.#pick(indexOf(e)));
    this.textBox.addEventListener('keydown', (e) => this.#key(e));
  }

  attributeChangedCallback(name, old, value) {
    if (name !== 'direction') return super.attributeChangedCallback(name, old, value);
    try {
      this.#direction = parseDirection(value);
      this.attributeError(name, null);
      if (this.result) this.#tint();
    } catch (error) {
      this.attributeError(name, error);
    }
  }

  /** 'to' (default): the weight each token receives from the selected one; 'from': the weight each gives it. */
  get direction() { return this.#direction; }
  set direction(value) {
    this.#direction = parseDirection(value);
    if (value === null || value === undefined) this.removeAttribute('direction');
    else this.setAttribute('direction', this.#direction);
  }

  /** The weight of each token from the selected one (as tinted; true weights), or null. */
  get tints() {
    const p = this.#current();
    return p && textTints(p.weights, this.result.n, this.query, this.#direction, this.colorScale, p.masked, p.positions).values;
  }

  render(result) {
    const { n } = result;
    if ((result.nK ?? n) !== n || result.keyTokens !== result.tokens)
      throw new DataError('attn-text shows self-attention (one token list): this data has different query and key tokens; use attn-heatmap for cross-attention');
    if (this.#spans?.tokens !== result.tokens) this.#buildText(result.tokens);
    this.#tint();
  }

  stateChanged(name) {
    if (name !== 'query') return true;  // layer, head, color-scale: the next render re-tints
    this.#tint();
    return false;
  }

  // One span per token, its leading space a text node before it: the text wraps as prose.
  #buildText(tokens) {
    const pieces = tokenPieces(tokens);
    const nodes = [], list = [];
    pieces.forEach(({ gap, word, breakAfter }, t) => {
      if (gap) nodes.push(gap);
      const span = h('span', { class: 'tok', role: 'option', 'data-index': t, tabindex: -1 }, word);
      list.push(span);
      nodes.push(span);
      if (breakAfter) nodes.push('\n');
    });
    this.textBox.replaceChildren(...nodes);
    this.#spans = { tokens, list };
  }

  // The colour positions of the matrix shown (kept while layer, head, scale and result stay).
  #current() {
    const r = this.result;
    if (!r) return null;
    const key = `${this.layer}/${this.head}/${this.colorScale}`;
    if (this.#positions?.result !== r || this.#positions.key !== key) {
      const weights = this.weights;
      const masked = maskMatrix(r.masks, r.n, r.n);
      this.#positions = { result: r, key, weights, masked, positions: colorPositions(this.colorScale, weights, r.n, r.n, masked),
        top: this.colorScale === 'max' ? largestWeight(weights, masked) : 1 };
    }
    return this.#positions;
  }

  #tint() {
    const p = this.#current();
    if (!p || !this.#spans) return;
    const theme = this.theme, n = this.result.n, q = Math.max(0, Math.min(this.query, n - 1));
    const { values, positions, masked } = textTints(p.weights, n, q, this.#direction, this.colorScale, p.masked, p.positions);
    const fg = theme.fg, bg = theme.bg;
    this.#spans.list.forEach((span, t) => {
      span.classList.toggle('masked', masked[t] === 1);
      span.dataset.weight = masked[t] ? 'masked' : String(values[t]);
      const tint = masked[t] ? bg : theme.scale.rgb(positions[t]);
      span.style.backgroundColor = masked[t] ? '' : css(tint);
      span.style.color = css(readableOn(tint, [fg, bg]));
      const selected = t === q;
      span.setAttribute('aria-selected', String(selected));
      span.tabIndex = selected ? 0 : -1;
      span.setAttribute('aria-label', `${span.textContent}: ${masked[t] ? 'masked' : fmt(values[t], 3)}`);
    });
    const what = this.result.layers > 1 || this.result.heads > 1 || isAggregate(this.layer, this.head)
      ? `, ${selectionLabel(this.result, this.layer, this.head)}` : '';
    this.textBox.setAttribute('aria-label', `The text, each token tinted by the weight it ${this.#direction === 'from' ? 'gives' : 'receives from'} ` +
      `the selected token ${quote(this.result.tokens[q])}${what}. Arrow keys choose the token.`);
    drawScaleLegend(this.scaleBox, theme, this.colorScale, p.top);
    this.maskedKey.hidden = !masked.some(Boolean);
    this.#showReadout(q, values, masked);
  }

  #showReadout(q, values, masked) {
    const tokens = this.result.tokens, t = this.#hover >= 0 && this.#hover < tokens.length ? this.#hover : q;
    const [from, to] = this.#direction === 'from' ? [t, q] : [q, t];
    this.readout.replaceChildren(h('span', { class: 'tok-name' }, quote(tokens[from])), ' → ', h('span', { class: 'tok-name' }, quote(tokens[to])), ': ',
      h('span', { class: 'value num' }, masked[t] ? 'masked (0)' : String(values[t])), ` · token ${t + 1} of ${tokens.length}`);
  }

  #pick(t) {
    if (t < 0 || !this.result) return;
    this.#hover = t;
    if (t !== this.query) this.setState('query', t);
    else this.#tint();
  }

  #key(event) {
    if (!this.result) return;
    const n = this.result.n;
    if (isActivation(event)) return;
    const to = navigate(event.key, this.query, n);
    if (to === null) return;
    event.preventDefault();
    this.#hover = to;
    this.setState('query', to);
    this.#spans?.list[to]?.focus();
    const v = this.tints;
    this.say(`${quote(this.result.tokens[to])}, token ${to + 1} of ${n}: selected. Strongest: ${strongestText(this.result.tokens, v, to)}`);
  }

  svg(result, theme, options) {
    return textSVG(result, theme, { layer: this.layer, head: this.head, query: Math.max(0, this.query), direction: this.#direction,
      weights: this.weights, 'color-scale': this.colorScale }, options);
  }
}

function strongestText(tokens, values, self) {
  let best = -1;
  for (let t = 0; t < values.length; t++) if (t !== self && (best < 0 || values[t] > values[best])) best = t;
  return best < 0 ? 'none' : `${quote(tokens[best])} ${fmt(values[best], 3)}`;
}

if (globalThis.customElements && !customElements.get('attn-text')) customElements.define('attn-text', AttnText);
