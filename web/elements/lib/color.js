// Colour scales. A weight w ∈ [0, 1] maps linearly from the theme's low colour to its high colour
// (in sRGB), so a drawn pixel can be read back to its weight (`invert`). Signed values (scores)
// use a diverging scale through the low colour.

let probe = null;
const parsed = new Map();

/** Any CSS colour the canvas understands → [r, g, b] (0–255). */
export function parseColor(css, fallback = [0, 0, 0]) {
  const key = String(css).trim();
  if (!key) return fallback;
  if (!parsed.has(key)) {
    probe ??= document.createElement('canvas').getContext('2d', { willReadFrequently: true });
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = '#000';
    probe.fillStyle = key;
    probe.fillRect(0, 0, 1, 1);
    const [r, g, b] = probe.getImageData(0, 0, 1, 1).data;
    parsed.set(key, [r, g, b]);
  }
  return parsed.get(key);
}

export const css = ([r, g, b]) => `rgb(${r}, ${g}, ${b})`;
export const hex = (rgb) => `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;

const mix = (a, b, t) => [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * t));
const clamp01 = (x) => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Sequential scale for weights in [0, 1]. */
export function weightScale(low, high) {
  const lut = new Uint32Array(1024);  // packed RGBA (little-endian) for ImageData fills
  for (let i = 0; i < 1024; i++) {
    const [r, g, b] = mix(low, high, i / 1023);
    lut[i] = (255 << 24) | (b << 16) | (g << 8) | r;
  }
  // The channel that changes most is the one to read a weight back from.
  let channel = 0;
  for (let c = 1; c < 3; c++) if (Math.abs(high[c] - low[c]) > Math.abs(high[channel] - low[channel])) channel = c;
  return {
    low, high,
    rgb: (w) => mix(low, high, clamp01(w)),
    css: (w) => css(mix(low, high, clamp01(w))),
    packed: (w) => lut[Math.round(clamp01(w) * 1023)],
    /** The packed colours `packed` picks from (for loops over many cells). */
    lut,
    /** The weight a drawn pixel [r, g, b] stands for. */
    invert: (rgb) => clamp01((rgb[channel] - low[channel]) / (high[channel] - low[channel])),
  };
}

/** Diverging scale for signed values in [−max, max]: negative ← low → positive. */
export function signedScale(negative, low, positive, max) {
  const m = max > 0 ? max : 1;
  const rgb = (x) => (x < 0 ? mix(low, negative, clamp01(-x / m)) : mix(low, positive, clamp01(x / m)));
  return { rgb, css: (x) => css(rgb(x)) };
}

/** WCAG 2.1 relative luminance of an sRGB colour [r, g, b] (0–255). */
export function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2.1 contrast ratio of two colours (1 to 21). */
export function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

const BLACK = [0, 0, 0], WHITE = [255, 255, 255];

/**
 * Black or white text on a cell of colour `rgb`: whichever has the higher contrast with it. One of
 * the two always reaches at least 4.58:1 (they tie at luminance 0.179), so text on any cell meets
 * WCAG AA's 4.5:1.
 */
export function textOn(rgb) {
  return contrast(BLACK, rgb) >= contrast(WHITE, rgb) ? '#000' : '#fff';
}
