// Styles live in constructable stylesheets adopted by each shadow root: nothing leaks into the
// page, and a strict CSP (style-src 'self', no inline <style>) is satisfied.
import { themeCSS } from './theme.js';

const sheets = new Map();

/** One shared CSSStyleSheet per CSS text. */
export function sheet(cssText) {
  if (!sheets.has(cssText)) {
    const s = new CSSStyleSheet();
    s.replaceSync(cssText);
    sheets.set(cssText, s);
  }
  return sheets.get(cssText);
}

/** What every figure shares: theme, frame, toolbar, error box, focus ring, screen-reader text. */
export const baseCSS = `${themeCSS}
:host {
  display: block; box-sizing: border-box; max-width: 100%; min-width: 0;
  color: var(--attn-fg); background: var(--attn-bg);
  font: var(--attn-font-size, 13px)/1.4 var(--attn-font, system-ui, -apple-system, "Segoe UI", sans-serif);
  border-radius: var(--attn-radius, 6px); contain: content;
}
:host([hidden]) { display: none; }
*, *::before, *::after { box-sizing: border-box; }
.frame { padding: var(--attn-padding, 8px); min-width: 0; }
.toolbar { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: center; margin-bottom: 6px; }
.toolbar:empty { display: none; }
.toolbar .controls { display: contents; }
.toolbar .spacer { flex: 1 1 auto; }
.toolbar .exports { display: inline-flex; gap: 6px; }
.toolbar label { display: inline-flex; gap: 4px; align-items: center; color: var(--attn-muted); }
button, select, input { font: inherit; color: inherit; }
button, select {
  background: var(--attn-surface); border: 1px solid var(--attn-line); border-radius: 4px;
  padding: 2px 8px; min-height: 28px; cursor: pointer;
}
button:hover, select:hover { border-color: var(--attn-muted); }
button[aria-pressed="true"] { background: var(--attn-accent); color: var(--attn-bg); border-color: var(--attn-accent); }
:focus { outline: none; }
:focus-visible { outline: 2px solid var(--attn-focus); outline-offset: 2px; }
.error {
  border: 1px solid var(--attn-negative); color: var(--attn-fg); border-radius: 4px;
  padding: 8px 10px; overflow-wrap: anywhere; white-space: pre-wrap;
}
.error::before { content: "⚠ "; color: var(--attn-negative); }
.status { color: var(--attn-muted); padding: 4px 0; }
.status:empty, [hidden] { display: none !important; }
.sr-only {
  position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
.tok { font-weight: 600; }
.hidden-note { color: var(--attn-muted); font-size: 0.92em; }
.error.attribute-error { padding: 4px 8px; margin-bottom: 6px; }
.num { font-variant-numeric: tabular-nums; }
@media (prefers-reduced-motion: reduce) { * { transition: none !important; animation: none !important; } }
/* Forced colours (e.g. Windows high contrast) replace the theme's colours with system ones, and
   backgrounds become Canvas: state that rests on a background (pressed, selected, checked, the
   current step, pinned rows) and bar lengths get system colours of their own. Canvas figures keep
   their pixels. */
@media (forced-colors: active) {
  button[aria-pressed="true"], [role="tab"][aria-selected="true"], [aria-checked="true"] {
    forced-color-adjust: none; background: Highlight; color: HighlightText; border-color: Highlight;
  }
  [role="gridcell"][aria-selected="true"], figure.current { border-color: Highlight; }
  tr.query > * { outline: 2px solid Highlight; outline-offset: -2px; }
  .track { forced-color-adjust: none; background: Canvas; border: 1px solid CanvasText; }
  .fill { forced-color-adjust: none; background: CanvasText; }
  :focus-visible { outline: 3px solid Highlight; outline-offset: 2px; }
}
`;
