// <attn-bars>: one query token and a bar per key token with its weight (the classic "it"
// scanning "The cat sat on the mat…" figure). Choose the query by click, tap or arrow keys;
// "Scan" moves the query across the sentence; bars glide between states; a key's exact weight
// shows on hover or focus (always with the `values` attribute).
import { describeRow, fmt, isActivation, navigate, quote, reducedMotion } from './lib/a11y.js';
import { AttnElement } from './lib/base.js';
import { isAggregate } from './lib/compute.js';
import { rowSumNote, selectionLabel } from './lib/selection.js';
import { h } from './lib/dom.js';
import { clip } from './lib/export.js';
import { barsSVG } from './svg/bars.js';

const SCAN_MS = 1100;

const STYLE = `
.queries { display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 8px; }
.queries button { min-height: 30px; padding: 2px 8px; max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.queries button[aria-checked="true"] { background: var(--attn-accent); color: var(--attn-bg); border-color: var(--attn-accent); font-weight: 600; }
.caption { margin: 0 0 4px; color: var(--attn-muted); overflow-wrap: anywhere; }
.bars { list-style: none; margin: 0; padding: 0; }
.bar {
  display: grid; grid-template-columns: var(--attn-label-width, 8ch) minmax(40px, 1fr) 4.2em; gap: 6px;
  align-items: center; min-height: 22px; padding: 1px 2px; border-radius: 3px; cursor: pointer;
}
.bar:hover, .bar:focus-visible { background: var(--attn-surface); }
.label { text-align: right; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar.query .label { font-weight: 700; }
.track { position: relative; height: 14px; background: var(--attn-low); border-radius: 2px; overflow: hidden; }
.fill {
  position: absolute; inset: 0; background: var(--attn-accent); transform-origin: left center;
  transform: scaleX(0); transition: transform 0.35s ease;
}
.bar.masked .track {
  background: repeating-linear-gradient(135deg, var(--attn-mask-bg) 0 3px, var(--attn-mask-line) 3px 4px);
}
.bar.masked .fill { display: none; }
.value { text-align: right; opacity: 0; color: var(--attn-muted); }
.bar:hover .value, .bar:focus .value, :host([values]) .value { opacity: 1; }
`;

export class AttnBars extends AttnElement {
  static styles = [STYLE];
  static maxTokens = 1024;

  #timer = 0;
  #focusKey = 0;

  setup(body) {
    this.scanButton = h('button', { type: 'button', class: 'scan', 'aria-pressed': 'false', onclick: () => this.toggleScan() }, '▶ Scan');
    this.controls.append(this.scanButton);
    this.queries = h('div', { class: 'queries', role: 'radiogroup', 'aria-label': 'Query token' });
    this.caption = h('p', { class: 'caption' });
    this.list = h('ol', { class: 'bars', part: 'bars' });
    body.append(this.queries, this.caption, this.list);
    this.queries.addEventListener('click', (e) => {
      const b = e.target.closest('button');
      if (b) this.#choose(Number(b.dataset.index));
    });
    this.queries.addEventListener('keydown', (e) => {
      const to = navigate(e.key, this.query, this.tokens?.length ?? 0);
      if (to === null && !isActivation(e)) return;
      e.preventDefault();
      this.#choose(to ?? this.query);
      this.queries.children[this.query]?.focus();
    });
    this.list.addEventListener('click', (e) => {
      const li = e.target.closest('li');
      if (li) this.#focusKey = Number(li.dataset.index);
    });
    this.list.addEventListener('keydown', (e) => {
      const li = e.target.closest('li');
      if (!li) return;
      const at = Number(li.dataset.index);
      if (isActivation(e)) {  // look from this key instead
        e.preventDefault();
        this.#choose(at);
        return;
      }
      const to = navigate(e.key, at, this.list.children.length, { columns: 1 });
      if (to === null) return;
      e.preventDefault();
      this.#focusKey = to;
      this.#rove(this.list, to);
      this.list.children[to].focus();
    });
  }

  connectedCallback() {
    super.connectedCallback();
    if (this.hasAttribute('autoplay') && !reducedMotion())
      this.updateComplete.then((ok) => ok && this.isConnected && this.startScan());
  }

  /** The current query's weights over the keys. */
  get row() {
    const w = this.weights, n = this.result?.nK ?? this.result?.n;
    return w ? w.subarray(this.query * n, (this.query + 1) * n) : null;
  }

  /** Whether the query is being scanned across the tokens. */
  get scanning() {
    return this.#timer !== 0;
  }

  startScan() {
    if (this.#timer || !this.result) return;
    // Reduced motion: Scan moves to the next token and stops there (nothing moves on its own).
    if (reducedMotion()) { this.setState('query', (this.query + 1) % this.result.n); return; }
    this.scanButton.setAttribute('aria-pressed', 'true');
    this.scanButton.textContent = '❚❚ Stop';
    this.#timer = setInterval(() => this.setState('query', (this.query + 1) % this.result.n), SCAN_MS);
  }

  stop() {
    clearInterval(this.#timer);
    this.#timer = 0;
    this.scanButton.setAttribute('aria-pressed', 'false');
    this.scanButton.textContent = '▶ Scan';
  }

  toggleScan() {
    if (this.#timer) this.stop();
    else this.startScan();
  }

  #choose(i) {
    this.stop();
    this.setState('query', i);
  }

  #rove(container, active) {
    for (const [i, el] of [...container.children].entries()) el.tabIndex = i === active ? 0 : -1;
  }

  render(result) {
    const { tokens, n } = result, keys = result.keyTokens ?? tokens;
    if (this.queries.children.length !== n || this.list.children.length !== keys.length || this.renderedTokens !== tokens
        || this.renderedKeys !== keys) {
      this.renderedTokens = tokens;
      this.renderedKeys = keys;
      this.queries.replaceChildren(...tokens.map((t, i) =>
        h('button', { type: 'button', role: 'radio', 'data-index': i, title: t }, clip(t, 24))));
      this.list.replaceChildren(...keys.map((t, j) => h('li', { 'data-index': j },
        h('span', { class: 'label', title: t }, t),
        h('span', { class: 'track' }, h('span', { class: 'fill' })),
        h('span', { class: 'value num' }))));
      const longest = Math.max(...keys.map((t) => Math.min(t.length, 14)));
      this.list.style.setProperty('--attn-label-width', `${Math.max(3, longest + 1)}ch`);
      this.#focusKey = Math.min(this.#focusKey, keys.length - 1);
    }
    this.#update();
  }

  stateChanged(name) {
    if (name !== 'query') return true;
    this.#update();
    const row = this.row;
    this.say(describeRow(this.tokens, this.query, row, (j) => this.isMasked(this.query, j), this.result.keyTokens));
    return false;
  }

  #update() {
    const { tokens } = this.result, keys = this.result.keyTokens ?? tokens, self = keys === tokens;
    const q = this.query, row = this.row;
    for (const [i, b] of [...this.queries.children].entries()) {
      b.setAttribute('aria-checked', String(i === q));
      b.tabIndex = i === q ? 0 : -1;
    }
    const aggregate = isAggregate(this.layer, this.head) ? ` (${selectionLabel(this.result, this.layer, this.head)})` : '';
    this.caption.replaceChildren('Where ', h('span', { class: 'tok' }, quote(tokens[q])),
      ` looks${aggregate}: one bar per ${self ? '' : 'key '}token, ${rowSumNote(this.layer, this.head)}.`);
    this.list.setAttribute('aria-label', `Attention weights of ${quote(tokens[q])} over the ${keys.length} ${self ? '' : 'key '}tokens`);
    for (const [j, li] of [...this.list.children].entries()) {
      const masked = this.isMasked(q, j), w = row[j];
      li.className = `bar${masked ? ' masked' : ''}${self && j === q ? ' query' : ''}`;
      li.dataset.weight = masked ? 'masked' : String(w);
      li.tabIndex = j === this.#focusKey ? 0 : -1;
      li.setAttribute('aria-label', `${quote(keys[j])}: ${masked ? 'masked' : fmt(w)}`);
      li.querySelector('.fill').style.transform = `scaleX(${masked ? 0 : w})`;
      li.querySelector('.value').textContent = masked ? 'masked' : fmt(w);
    }
  }

  svg(result, theme, options) {
    return barsSVG(result, theme, { layer: this.layer, head: this.head, query: this.query, row: this.row }, options);
  }
}

if (globalThis.customElements && !customElements.get('attn-bars')) customElements.define('attn-bars', AttnBars);
