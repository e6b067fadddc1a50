// Float64 reference in plain JavaScript, independent of the engine: textbook loops.

export function attention(q, k, v, { dK, dV = dK, heads = 1, causal = false, scale, keyMask = null }) {
  const nQ = q.length / (heads * dK), nK = k.length / (heads * dK);
  scale ??= 1 / Math.sqrt(dK);
  const weights = new Float64Array(heads * nQ * nK);
  const scores = new Float64Array(heads * nQ * nK);
  const output = new Float64Array(heads * nQ * dV);
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < nQ; i++) {
      const row = (h * nQ + i) * nK;
      let max = -Infinity;
      const keep = [];
      for (let j = 0; j < nK; j++) {
        let dot = 0;
        for (let c = 0; c < dK; c++) dot += q[(h * nQ + i) * dK + c] * k[(h * nK + j) * dK + c];
        scores[row + j] = dot;
        keep[j] = (!causal || j <= i) && (!keyMask || keyMask[j] === 1);
        if (keep[j]) max = Math.max(max, dot * scale);
      }
      let sum = 0;
      for (let j = 0; j < nK; j++) sum += keep[j] ? Math.exp(scores[row + j] * scale - max) : 0;
      for (let j = 0; j < nK; j++) {
        const w = keep[j] ? Math.exp(scores[row + j] * scale - max) / sum : 0;
        weights[row + j] = w;
        for (let c = 0; c < dV; c++) output[(h * nQ + i) * dV + c] += w * v[(h * nK + j) * dV + c];
      }
    }
  return { weights, scores, output, nQ, nK };
}

// y[n, out] = x[n, in]·w[in, out] + b
export function project(x, n, inWidth, w, outWidth, b) {
  const y = new Float64Array(n * outWidth);
  for (let i = 0; i < n; i++)
    for (let o = 0; o < outWidth; o++) {
      let acc = b ? b[o] : 0;
      for (let c = 0; c < inWidth; c++) acc += x[i * inWidth + c] * w[c * outWidth + o];
      y[i * outWidth + o] = acc;
    }
  return y;
}

export function multiHead(x, { dModel, heads = 1, wQ, wK, wV, wO, bQ, bK, bV, bO, xKV, causal = false, scale, keyMask }) {
  const nQ = x.length / dModel, src = xKV ?? x, nK = src.length / dModel, d = dModel / heads;
  const split = (m, n) => {
    const out = new Float64Array(m.length);
    for (let h = 0; h < heads; h++)
      for (let i = 0; i < n; i++)
        for (let c = 0; c < d; c++) out[(h * n + i) * d + c] = m[i * dModel + h * d + c];
    return out;
  };
  const q = split(project(x, nQ, dModel, wQ, dModel, bQ), nQ);
  const k = split(project(src, nK, dModel, wK, dModel, bK), nK);
  const v = split(project(src, nK, dModel, wV, dModel, bV), nK);
  const att = attention(q, k, v, { dK: d, heads, causal, scale, keyMask });
  const merged = new Float64Array(nQ * dModel);
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < nQ; i++)
      for (let c = 0; c < d; c++) merged[i * dModel + h * d + c] = att.output[(h * nQ + i) * d + c];
  return { weights: att.weights, output: wO ? project(merged, nQ, dModel, wO, dModel, bO) : merged };
}

export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// max |a − b| / max |b|
export function normalisedError(got, want) {
  let scale = 1e-30;
  for (const w of want) scale = Math.max(scale, Math.abs(w));
  return maxAbsDiff(got, want) / scale;
}

// A seeded xorshift32 generator of numbers in [0, 1): tests are reproducible.
export function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
}

// Seeded uniform floats in [lo, hi).
export function uniform(n, seed, lo = -1, hi = 1) {
  const next = random(seed);
  return Float32Array.from({ length: n }, () => lo + (hi - lo) * next());
}

/** Seeded attention rows that each sum to 1, [layers][heads][n][n] (what authors give as `attention`). */
export function randomAttention(layers, heads, n, seed, power = 2) {
  const next = random(seed);
  return Array.from({ length: layers }, () => Array.from({ length: heads }, () => Array.from({ length: n }, () => {
    const row = Array.from({ length: n }, () => next() ** power);
    const sum = row.reduce((a, b) => a + b, 0);
    return row.map((x) => x / sum);
  })));
}
