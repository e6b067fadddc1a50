// The figures' look: CSS custom properties with light and dark defaults (prefers-color-scheme, or
// forced with theme="light|dark" on the element), read back for what canvas and SVG draw.
import { parseColor, weightScale } from './color.js';

const LIGHT = {
  '--attn-fg': '#1b1f24', '--attn-bg': '#ffffff', '--attn-muted': '#5c6570', '--attn-line': '#d3d8df',
  '--attn-low': '#f3f6fb', '--attn-high': '#1f4fb4', '--attn-negative': '#b8430b',
  '--attn-mask-bg': '#e6e6e6', '--attn-mask-line': '#a3a3a3', '--attn-accent': '#1f4fb4',
  '--attn-focus': '#d9480f', '--attn-surface': '#f1f3f6',
};
const DARK = {
  '--attn-fg': '#e3e6ea', '--attn-bg': '#16181c', '--attn-muted': '#9aa3ad', '--attn-line': '#3a3f47',
  '--attn-low': '#1f232a', '--attn-high': '#8fb8ff', '--attn-negative': '#ff9a5c',
  '--attn-mask-bg': '#2c2c2c', '--attn-mask-line': '#6b6b6b', '--attn-accent': '#8fb8ff',
  '--attn-focus': '#ffa94d', '--attn-surface': '#22262c',
};

const declarations = (vars) => Object.entries(vars).map(([k, v]) => `${k}: ${v};`).join(' ');

/** The :host rules every figure shares (custom properties with light/dark defaults). */
export const themeCSS = `
:host { ${declarations(LIGHT)} color-scheme: light; }
:host([theme="dark"]) { ${declarations(DARK)} color-scheme: dark; }
@media (prefers-color-scheme: dark) {
  :host(:not([theme="light"])) { ${declarations(DARK)} color-scheme: dark; }
}`;

/** The theme object from `color(name)` → [r, g, b] for each --attn-* custom property. */
function themeFrom(color, fontFamily) {
  const theme = {
    fg: color('--attn-fg'), bg: color('--attn-bg'), muted: color('--attn-muted'),
    line: color('--attn-line'), low: color('--attn-low'), high: color('--attn-high'),
    negative: color('--attn-negative'), maskBg: color('--attn-mask-bg'),
    maskLine: color('--attn-mask-line'), accent: color('--attn-accent'), focus: color('--attn-focus'),
    surface: color('--attn-surface'),
    fontFamily,
  };
  theme.scale = weightScale(theme.low, theme.high);
  return theme;
}

/** The colours and font to draw with, as the element's styles resolve them now. */
export function readTheme(element) {
  const style = getComputedStyle(element);
  return themeFrom((name) => parseColor(style.getPropertyValue(name), parseColor(LIGHT[name])),
    style.fontFamily || 'system-ui, sans-serif');
}

const hexRGB = (value) => [1, 3, 5].map((i) => parseInt(value.slice(i, i + 2), 16));

/**
 * The default light or dark colours without a DOM (what readTheme gives for an element with no
 * --attn-* overrides): for rendering in Node, e.g. the command-line renderer.
 */
export function themeFor(name = 'light') {
  if (name !== 'light' && name !== 'dark') throw new RangeError(`theme must be "light" or "dark" (got ${JSON.stringify(name)})`);
  const vars = name === 'dark' ? DARK : LIGHT;
  return themeFrom((key) => hexRGB(vars[key]), 'system-ui, sans-serif');
}

/** Calls `onChange` when the page's colour scheme flips; returns a function that stops it. */
export function watchColorScheme(onChange) {
  const query = matchMedia('(prefers-color-scheme: dark)');
  query.addEventListener('change', onChange);
  return () => query.removeEventListener('change', onChange);
}
