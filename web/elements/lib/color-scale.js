// The `color-scale` of every figure that colours weights: where on the theme's low → high ramp
// (color.js weightScale, a position t ∈ [0, 1]) a weight w is drawn. One function for canvas,
// SVG, PNG and HTML export, so what is saved is what is seen; the readouts keep the true weight.
//   linear  t = w                      (0 … 1, the default)
//   sqrt    t = √w                     (small weights lifted)
//   log     t = log10(w / floor) / log10(1 / floor), w ≤ floor → 0 (floor = LOG_FLOOR = 0.001)
//   row     t = w / (largest weight of w's row)
//   max     t = w / (largest weight shown)
// Masked cells do not count towards a row's or the table's largest weight (they are hatched).

export const COLOR_SCALES = ['linear', 'sqrt', 'log', 'row', 'max'];
/** The smallest weight the log scale tells apart from 0: 1e-3 (three decades up to 1). */
export const LOG_FLOOR = 1e-3;
const DECADES = -Math.log10(LOG_FLOOR);

/** Attribute text or property value → one of COLOR_SCALES (RangeError otherwise). */
export function parseColorScale(value) {
  const word = typeof value === 'string' ? value.trim().toLowerCase() : value;
  if (!COLOR_SCALES.includes(word))
    throw new RangeError(`color-scale must be one of ${COLOR_SCALES.join(', ')} (got ${JSON.stringify(value)})`);
  return word;
}

/**
 * The colour position of weight `w` on scale `kind`; `top` is the largest weight it is divided
 * by (the row's for 'row', the table's for 'max'; unused otherwise). NaN and w ≤ 0 give 0.
 */
export function colorPosition(kind, w, top = 1) {
  if (!(w > 0)) return 0;
  let t;
  switch (kind) {
    case 'sqrt': t = Math.sqrt(w); break;
    case 'log': t = w <= LOG_FLOOR ? 0 : Math.log10(w / LOG_FLOOR) / DECADES; break;
    case 'row': case 'max': t = top > 0 ? w / top : 0; break;
    default: t = w;
  }
  return t < 1 ? t : 1;
}

/** The largest unmasked weight of each row (Float64Array of `rows`). */
function rowMaxima(weights, rows, cols, masked) {
  const top = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let m = 0;
    for (let c = i * cols, end = c + cols; c < end; c++) if (weights[c] > m && !masked?.[c]) m = weights[c];
    top[i] = m;
  }
  return top;
}

/**
 * The rows×cols matrix `weights` as colour positions (what the figures colour with): for
 * 'linear' the weights themselves (no copy), else a new Float32Array (or `into`, when it is
 * one of the right length). `masked`: Uint8Array (1 = masked) or null. `top`: for 'max', the
 * largest weight to divide by when it is not this matrix's own (two panels on one scale).
 */
export function colorPositions(kind, weights, rows, cols = rows, masked = null, { into = null, top: given } = {}) {
  if (kind === 'linear' || kind === undefined) return weights;
  const count = rows * cols;
  const out = into instanceof Float32Array && into.length === count ? into : new Float32Array(count);
  if (kind === 'row' || kind === 'max') {
    const maxima = rowMaxima(weights, rows, cols, masked);
    let all = 0;
    for (const m of maxima) if (m > all) all = m;
    if (given !== undefined) all = given;
    for (let i = 0; i < rows; i++) {
      const top = kind === 'row' ? maxima[i] : all;
      const k = top > 0 ? 1 / top : 0;
      for (let c = i * cols, end = c + cols; c < end; c++) {
        const w = weights[c];
        out[c] = w > 0 ? (w >= top ? 1 : w * k) : 0;
      }
    }
  } else {
    for (let c = 0; c < count; c++) out[c] = colorPosition(kind, weights[c]);
  }
  return out;
}

/** The largest unmasked weight of a matrix (0 when there is none). */
export function largestWeight(weights, masked = null) {
  let m = 0;
  for (let c = 0; c < weights.length; c++) if (weights[c] > m && !masked?.[c]) m = weights[c];
  return m;
}

const label = (w) => (w === 0 ? '0' : w >= 0.001 ? String(Number(w.toPrecision(2))) : w.toExponential(0).replace('e-', 'e−'));

/**
 * The legend's ticks for scale `kind`: [{ t (position 0…1), label }]. `top`: the largest weight
 * shown (for 'max'); 'row' labels its end "row max".
 */
export function legendTicks(kind, top = 1) {
  const at = (weights) => weights.map((w) => ({ t: colorPosition(kind, w, top), label: label(w) }));
  switch (kind) {
    case 'sqrt': return at([0, 0.01, 0.1, 0.25, 0.5, 1]);
    case 'log': return [{ t: 0, label: `≤${label(LOG_FLOOR)}` }, ...at([0.01, 0.1, 1])];
    case 'row': return [{ t: 0, label: '0' }, { t: 0.5, label: '½' }, { t: 1, label: 'row max' }];
    case 'max': return top > 0 ? at([0, top / 2, top]) : at([0]);
    default: return at([0, 0.25, 0.5, 0.75, 1]);
  }
}

/** What the legend says the colours mean, e.g. "√ weight" (for a title or screen readers). */
export function scaleCaption(kind, top = 1) {
  return {
    linear: 'weight, 0 to 1', sqrt: 'square root of the weight',
    log: `log of the weight, ${label(LOG_FLOOR)} to 1`, row: 'weight ÷ its row’s largest weight',
    max: `weight ÷ the largest weight shown (${label(top)})`,
  }[kind] ?? 'weight';
}
