// The compare figure's arithmetic and colours, DOM-free: A − B cell by cell, and a diverging
// scale (--attn-negative … --attn-bg … --attn-high) over [−max, +max] whose input is mapped to
// [0, 1] (0.5 = no difference) so the same cell-drawing code as the weights can paint it.

/** A − B for two equal-length matrices: { values: Float32Array, max: largest |A − B| }. */
export function difference(a, b) {
  if (a.length !== b.length) throw new RangeError(`A has ${a.length} cells and B ${b.length}: the difference needs the same shape`);
  const values = new Float32Array(a.length);
  let max = 0;
  for (let c = 0; c < a.length; c++) {
    const d = a[c] - b[c];
    values[c] = d;
    if (Math.abs(d) > max) max = Math.abs(d);
  }
  return { values, max };
}

/** Signed values in [−max, max] → [0, 1] (0.5 at 0), for a scale over [0, 1]. */
export function toUnit(values, max) {
  const m = max > 0 ? max : 1;
  return values.map((d) => Math.min(1, Math.max(0, 0.5 + d / (2 * m))));
}

const mix = (a, b, t) => [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * t));

/**
 * A diverging scale over t ∈ [0, 1]: 0 → negative, 0.5 → mid, 1 → positive (linear in sRGB on
 * each half), with the same methods as color.js's weightScale (rgb, css, packed, lut: 1024
 * packed RGBA colours for matrix-canvas.js).
 */
export function divergingScale(negative, mid, positive) {
  const rgb = (t) => {
    const x = t < 0 ? 0 : t > 1 ? 1 : t;
    return x < 0.5 ? mix(mid, negative, (0.5 - x) * 2) : mix(mid, positive, (x - 0.5) * 2);
  };
  const lut = new Uint32Array(1024);
  for (let i = 0; i < 1024; i++) {
    const [r, g, b] = rgb(i / 1023);
    lut[i] = ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
  }
  return {
    negative, mid, positive, rgb, lut,
    css: (t) => `rgb(${rgb(t).join(', ')})`,
    packed: (t) => lut[Math.round((t < 0 ? 0 : t > 1 ? 1 : t) * 1023)],
  };
}

/** The theme's difference scale: --attn-negative (B larger) … --attn-bg … --attn-high (A larger). */
export const differenceScale = (theme) => divergingScale(theme.negative, theme.bg, theme.high);

/** +0.29, −0.05, 0.00 */
export const signed = (d, digits = 2) => `${d > 0 ? '+' : d < 0 ? '−' : ''}${Math.abs(d).toFixed(digits)}`;
