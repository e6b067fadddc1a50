// The contestants of the benchmark, the same in Node and in Chromium: each library is passed in
// by the caller (Node imports them from node_modules, the browser page from /node_modules/...).
//
// A peer is { id, label, prepare(h, n, d, inputs) } where prepare returns
//   { run(): output or Promise<output>   — the timed call: inputs in, attention, output out
//     toHND(output): Float32Array [h, n, d] for the check against ours (not timed)
//     note?: string, heads?: number (fewer heads timed than asked: see plainJs)
//     dispose?() }
// Inputs are [h, n, d] row-major Float32Arrays (q, k, v). Layout changes a peer needs (ORT's
// MultiHeadAttention wants the query as [1, n, h·d]; TF.js is fast only with Kᵀ given) are done in
// prepare(), untimed: that only favours the peers.

/** Inputs uniform in [-1, 1), from a seeded generator (mulberry32) so runs are repeatable. */
export function uniform(length, seed) {
  let a = seed >>> 0;
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

export function makeInputs(h, n, d, seed = 1) {
  return { q: uniform(h * n * d, seed), k: uniform(h * n * d, seed + 1), v: uniform(h * n * d, seed + 2) };
}

const same = (x) => x;

/** Our engine through its public API. `weights`: false times the output-only (streaming) path. */
export function attnlensPeer(lens, { id, label, weights }) {
  return {
    id, label, ours: true, build: lens.build,
    prepare(h, n, d, { q, k, v }) {
      const options = { dK: d, heads: h, weights };
      return {
        run: () => lens.attention(q, k, v, options).output,
        toHND: same,
        memory: () => lens.lastCallBytes(),
      };
    },
  };
}

const BUILD_LABELS = { relaxed: 'relaxed SIMD', simd: 'SIMD128', scalar: 'scalar wasm' };

/**
 * Our contestants, Node and browser alike: the fastest build the runtime runs, output-only
 * ('attnlens') and with weights ('attnlens-weights'), then every slower build output-only
 * ('attnlens-simd' when the fastest is relaxed; 'attnlens-scalar' when `wanted` names scalar).
 * `init` is attnlens's init (imported by the caller, whose path to it differs).
 */
export async function ourPeers(init, wanted) {
  // One thread: init()'s default in Node and isolated pages is the threaded build (threads.js
  // has the threaded rows).
  const lens = await init({ threads: false });
  const label = (l, what) => `attnlens ${BUILD_LABELS[l.build]}, ${what}`;
  const peers = [
    attnlensPeer(lens, { id: 'attnlens', label: label(lens, 'output only'), weights: false }),
    attnlensPeer(lens, { id: 'attnlens-weights', label: label(lens, 'with weights'), weights: true }),
  ];
  if (lens.build === 'relaxed') {
    const simd = await init({ build: 'simd', threads: false });
    peers.push(attnlensPeer(simd, { id: 'attnlens-simd', label: label(simd, 'output only'), weights: false }));
  }
  if (wanted.includes('scalar')) {
    const scalar = await init({ build: 'scalar', threads: false });
    peers.push(attnlensPeer(scalar, { id: 'attnlens-scalar', label: label(scalar, 'output only'), weights: false }));
  }
  return { lens, peers };
}

/**
 * onnxruntime-web, WASM execution provider, one thread. `models(h, d)` returns the three graphs'
 * bytes ({ plain, mha, attention23 }, see onnx-models.js). `threads` > 1 (the threads section,
 * threads.js): its threaded wasm with that many threads; ORT reads the count once per process.
 */
export function ortPeers(ort, models, { threads = 1 } = {}) {
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  const options = {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all', intraOpNumThreads: threads,
    interOpNumThreads: 1, executionMode: 'sequential',
  };
  const variant = (key, label, feeds, toHND) => ({
    id: `ort-${key}`, label: threads > 1 ? `${label}, ${threads} threads` : label,
    async prepare(h, n, d, inputs) {
      const session = await ort.InferenceSession.create(models(h, d)[key], options);
      const f = feeds(ort, h, n, d, inputs);
      return {
        run: async () => (await session.run(f)).O.data,
        toHND: (o) => toHND(o, h, n, d),
        dispose: () => session.release(),
      };
    },
  });
  const t = (ort, data, dims) => new ort.Tensor('float32', data, dims);
  return [
    variant('plain', 'ORT MatMul→Softmax→MatMul', (ort, h, n, d, { q, k, v }) =>
      ({ Q: t(ort, q, [h, n, d]), K: t(ort, k, [h, n, d]), V: t(ort, v, [h, n, d]) }), same),
    variant('mha', 'ORT MultiHeadAttention', (ort, h, n, d, { q, k, v }) =>
      ({ Q: t(ort, hndToNHD(q, h, n, d), [1, n, h * d]), K: t(ort, k, [1, h, n, d]), V: t(ort, v, [1, h, n, d]) }),
    nhdToHND),
    variant('attention23', 'ORT Attention (opset 23)', (ort, h, n, d, { q, k, v }) =>
      ({ Q: t(ort, q, [1, h, n, d]), K: t(ort, k, [1, h, n, d]), V: t(ort, v, [1, h, n, d]) }), same),
  ];
}

function hndToNHD(x, h, n, d) {
  const out = new Float32Array(x.length);
  for (let a = 0; a < h; a++)
    for (let i = 0; i < n; i++) out.set(x.subarray((a * n + i) * d, (a * n + i + 1) * d), (i * h + a) * d);
  return out;
}
function nhdToHND(x, h, n, d) {
  const out = new Float32Array(x.length);
  for (let a = 0; a < h; a++)
    for (let i = 0; i < n; i++) out.set(x.subarray((i * h + a) * d, (i * h + a + 1) * d), (a * n + i) * d);
  return out;
}

/**
 * TF.js with the WASM backend (XNNPACK), one thread: per head one 2-D matMul Q·Kᵀ (Kᵀ given, as
 * matMul with transposeB is slow there), scale, softmax, matMul with V.
 */
export function tfjsPeer(tf) {
  return {
    id: 'tfjs-wasm', label: 'TF.js wasm (matMul per head)',
    prepare(h, n, d, { q, k, v }) {
      const kT = new Float32Array(k.length);
      for (let a = 0; a < h; a++)
        for (let j = 0; j < n; j++)
          for (let c = 0; c < d; c++) kT[(a * d + c) * n + j] = k[(a * n + j) * d + c];
      const scale = 1 / Math.sqrt(d);
      return {
        run() {
          const out = new Float32Array(h * n * d);
          for (let a = 0; a < h; a++) {
            const o = tf.tidy(() => {
              const qa = tf.tensor2d(q.subarray(a * n * d, (a + 1) * n * d), [n, d]);
              const kTa = tf.tensor2d(kT.subarray(a * n * d, (a + 1) * n * d), [d, n]);
              const va = tf.tensor2d(v.subarray(a * n * d, (a + 1) * n * d), [n, d]);
              return tf.matMul(tf.softmax(tf.mul(tf.matMul(qa, kTa), scale)), va);
            });
            out.set(o.dataSync(), a * n * d);
            o.dispose();
          }
          return out;
        },
        toHND: same,
      };
    },
  };
}

/** The textbook: Float32Array, triple loops, a stable softmax per row. */
export function plainJsAttention(q, k, v, h, n, d) {
  const scale = 1 / Math.sqrt(d);
  const out = new Float32Array(h * n * d), s = new Float32Array(n);
  for (let a = 0; a < h; a++) {
    const base = a * n * d;
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += q[base + i * d + c] * k[base + j * d + c];
        s[j] = dot * scale;
        if (s[j] > max) max = s[j];
      }
      let sum = 0;
      for (let j = 0; j < n; j++) sum += (s[j] = Math.exp(s[j] - max));
      const o = base + i * d;
      for (let j = 0; j < n; j++) {
        const p = s[j] / sum;
        for (let c = 0; c < d; c++) out[o + c] += p * v[base + j * d + c];
      }
    }
  }
  return out;
}

/**
 * Plain JavaScript. Above `maxN` keys it times one head only and scales the time by h (heads are
 * independent, so this is what h heads take); the row says so.
 */
export function plainJsPeer({ maxN = 1024 } = {}) {
  return {
    id: 'plain-js', label: 'plain JS triple loops',
    prepare(h, n, d, { q, k, v }) {
      const timedHeads = n > maxN ? 1 : h;
      return {
        run: () => plainJsAttention(q, k, v, timedHeads, n, d),
        toHND: same,
        heads: timedHeads,
        note: timedHeads < h ? `1 of ${h} heads timed, time ×${h}` : undefined,
      };
    },
  };
}
