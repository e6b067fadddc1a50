// Test helpers for the language model: reads the bundled llama2.c checkpoint into named arrays
// and writes it back as llama2.c bytes or as Hugging Face safetensors (F32, F16, BF16; q/k rows
// permuted as llama2.c export.py does), independently of the engine's loaders.
import { readFileSync } from 'node:fs';

export const MODEL_DIR = new URL('../../web/models/stories260K/', import.meta.url);
export const FIXTURES = new URL('../fixtures/stories260K/', import.meta.url);

export const readModelFile = (name) => new Uint8Array(readFileSync(new URL(name, MODEL_DIR)));
export const readFixture = (name) => readFileSync(new URL(name, FIXTURES));

/** { header: Int32Array(7), arrays: { name: Float32Array }, order } of a llama2.c v0 file. */
export function readLlama2c(bytes) {
  const header = new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 28));
  const [dim, hidden, layers, heads, kvHeads, vocab, seqLen] = header;
  const kv = (dim / heads) * kvHeads;
  const sizes = [
    ['embedding', Math.abs(vocab) * dim], ['rmsAtt', layers * dim], ['wq', layers * dim * dim],
    ['wk', layers * kv * dim], ['wv', layers * kv * dim], ['wo', layers * dim * dim], ['rmsFfn', layers * dim],
    ['w1', layers * hidden * dim], ['w2', layers * dim * hidden], ['w3', layers * hidden * dim], ['rmsFinal', dim],
    ['freqCis', seqLen * (dim / heads)],
  ];
  const floats = new Float32Array(bytes.buffer.slice(bytes.byteOffset + 28, bytes.byteOffset + bytes.byteLength));
  const arrays = {};
  let at = 0;
  for (const [name, n] of sizes) {
    arrays[name] = floats.slice(at, at + n);
    at += n;
  }
  return { header, arrays, order: sizes.map(([n]) => n), config: { dim, hidden, layers, heads, kvHeads, vocab, seqLen } };
}

export function writeLlama2c({ header, arrays, order }) {
  const parts = [new Uint8Array(header.buffer.slice(0)), ...order.map((n) => new Uint8Array(arrays[n].buffer.slice(0)))];
  const out = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.byteLength);
  return out;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Round-to-nearest-even float32 → bfloat16 bits. */
export function toBf16(x) {
  f32[0] = x;
  return ((u32[0] + 0x7fff + ((u32[0] >>> 16) & 1)) >>> 16) & 0xffff;
}

/** float32 → IEEE half bits, round to nearest even (finite values in half's range). */
export function toF16(x) {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a < 2 ** -14) return sign | Math.round(a * 2 ** 24);  // subnormal (ties away from 0: rare, and
  // roundTo() decodes the same bits, so the tests compare like with like)
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  let m = a / 2 ** e - 1;  // [0, 1)
  let mant = m * 1024;
  const floor = Math.floor(mant);
  const frac = mant - floor;
  mant = frac > 0.5 || (frac === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  if (mant === 1024) (mant = 0), (e += 1);
  return sign | ((e + 15) << 10) | mant;
}

/** The value a float32 takes after a trip through `dtype`. */
export function roundTo(x, dtype) {
  if (dtype === 'F32') return Math.fround(x);
  if (dtype === 'BF16') {
    u32[0] = toBf16(x) << 16;
    return f32[0];
  }
  const h = toF16(x);
  const e = (h >> 10) & 31, m = h & 1023;
  const v = e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15);
  return h & 0x8000 ? -v : v;
}

// export.py: rows of each head regrouped for rotate-half RoPE.
function permuteRows(w, heads, hd, cols) {
  const out = new Float32Array(w.length);
  for (let h = 0; h < heads; h++)
    for (let c = 0; c < 2; c++)
      for (let i = 0; i < hd / 2; i++)
        out.set(w.subarray((h * hd + 2 * i + c) * cols, (h * hd + 2 * i + c + 1) * cols), (h * hd + c * (hd / 2) + i) * cols);
  return out;
}

/**
 * model.safetensors bytes for a readLlama2c() model, tensors in `dtype`; `lmHead` adds
 * 'lm_head.weight' (the separate classifier, else a copy of the embedding).
 */
export function writeSafetensors({ arrays, config }, dtype = 'F32', { lmHead = false } = {}) {
  const { dim: d, hidden: h, layers, heads, kvHeads } = config;
  const hd = d / heads, kv = hd * kvHeads, vocab = Math.abs(config.vocab);
  const layer = (name, l, n) => arrays[name].subarray(l * n, (l + 1) * n);
  const tensors = [['model.embed_tokens.weight', [vocab, d], arrays.embedding]];
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}.`;
    tensors.push(
      [`${p}input_layernorm.weight`, [d], layer('rmsAtt', l, d)],
      [`${p}self_attn.q_proj.weight`, [d, d], permuteRows(layer('wq', l, d * d), heads, hd, d)],
      [`${p}self_attn.k_proj.weight`, [kv, d], permuteRows(layer('wk', l, kv * d), kvHeads, hd, d)],
      [`${p}self_attn.v_proj.weight`, [kv, d], layer('wv', l, kv * d)],
      [`${p}self_attn.o_proj.weight`, [d, d], layer('wo', l, d * d)],
      [`${p}post_attention_layernorm.weight`, [d], layer('rmsFfn', l, d)],
      [`${p}mlp.gate_proj.weight`, [h, d], layer('w1', l, h * d)],
      [`${p}mlp.down_proj.weight`, [d, h], layer('w2', l, d * h)],
      [`${p}mlp.up_proj.weight`, [h, d], layer('w3', l, h * d)]);
  }
  tensors.push(['model.norm.weight', [d], arrays.rmsFinal]);
  if (lmHead) tensors.push(['lm_head.weight', [vocab, d], arrays.classifier ?? arrays.embedding]);
  const size = dtype === 'F32' ? 4 : 2;
  const header = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape, values] of tensors) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + values.length * size] };
    offset += values.length * size;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, json.length, true);
  out.set(json, 8);
  let at = 8 + json.length;
  for (const [, , values] of tensors)
    for (const x of values) {
      if (dtype === 'F32') view.setFloat32(at, x, true), (at += 4);
      else view.setUint16(at, dtype === 'F16' ? toF16(x) : toBf16(x), true), (at += 2);
    }
  return out;
}

/** The model with every weight rounded as `dtype` would store it. */
export function roundedModel(model, dtype) {
  const arrays = {};
  for (const [name, values] of Object.entries(model.arrays))
    arrays[name] = name === 'freqCis' ? values : Float32Array.from(values, (x) => roundTo(x, dtype));
  return { ...model, arrays };
}
