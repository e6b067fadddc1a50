// Small synthetic checkpoints for the language-model loaders, written here from seeded random
// weights (no code shared with the engine): a llama2.c tokenizer file with byte fallback and
// merges, llama2.c files (legacy v0 with a tied or separate classifier, export.py version 1)
// and Hugging Face config.json + model.safetensors (F32/F16/BF16, tied or lm_head, RoPE theta,
// RMSNorm eps). Shapes differ from stories260K on purpose (other dims, head widths, heads ==
// kv heads) so that nothing tuned to one model passes by accident.
import { random } from './reference.js';
import { writeSafetensors } from './lm-files.js';

const utf8 = new TextEncoder();

// Pieces after <unk>, BOS, EOS and the 256 byte pieces: characters, then merges (each the
// concatenation of two earlier pieces; later merges score lower, as SentencePiece orders them).
const CHARACTERS = [...' abcdefghijklmnopqrstuvwxyzTLO.,!?\'"\né你😀'];
const MERGES = [
  ' t', 'he', ' a', 'in', ' s', 'er', 'an', ' the', 'nd', ' w', 'ou', 'on', 'ing', ' b', 'at', 'en',
  ' and', 'ed', ' c', 'is', 'it', 'ar', ' m', ' d', 'll', 'or', ' l', ' f', ' p', 'om', ' h', 'el',
  ' o', 'to', ' to', 'ay', ' was', ' he', 'ot', ' wa', 'ith', ' with', 'ere', ' ha', 'ut', 'ow',
  ' pl', ' play', ' T', ' Th', ' The', ' L', ' O', ' On', ' Once', 'ce', 'nce', ' é', 'ly', ' Ly',
];

/**
 * A llama2.c tokenizer file (int32 max_token_length, then per id f32 score, int32 length, bytes)
 * with `extra` pieces beyond the 259 special and byte pieces: { bytes, vocabSize, pieces }.
 */
export function syntheticTokenizer() {
  const pieces = ['<unk>', '\n<s>\n', '\n</s>\n'];
  const scores = [0, 0, 0];
  for (let b = 0; b < 256; b++) pieces.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`), scores.push(0);
  CHARACTERS.forEach((c, i) => { pieces.push(c); scores.push(-1000 - i); });
  MERGES.forEach((m, i) => { pieces.push(m); scores.push(-i); });
  const encoded = pieces.map((p) => utf8.encode(p));
  const size = 4 + encoded.reduce((s, e) => s + 8 + e.length, 0);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setInt32(0, Math.max(...encoded.map((e) => e.length)), true);
  let at = 4;
  encoded.forEach((e, id) => {
    view.setFloat32(at, scores[id], true);
    view.setInt32(at + 4, e.length, true);
    bytes.set(e, at + 8);
    at += 8 + e.length;
  });
  return { bytes, vocabSize: pieces.length, pieces };
}

/**
 * Seeded random weights in the lm-files.js model shape ({ header, arrays, order, config }), so
 * that writeLlama2c/writeSafetensors write them: nn.Linear [out, in] matrices with entries of
 * about 1/√in (q/k a little larger, so attention is not flat), norms near 1, and a separate
 * classifier unless `shared`.
 */
export function syntheticModel({ dim, hidden, layers, heads, kvHeads, vocab, seqLen, shared = true, seed = 1 }) {
  const next = random(seed);
  const normal = () => {
    const u = Math.max(next(), 1e-12), v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const fill = (n, scale, mean = 0) => Float32Array.from({ length: n }, () => mean + scale * normal());
  const kv = (dim / heads) * kvHeads;
  const s = 1 / Math.sqrt(dim);
  const arrays = {
    embedding: fill(vocab * dim, 1),
    rmsAtt: fill(layers * dim, 0.1, 1),
    wq: fill(layers * dim * dim, 2 * s),
    wk: fill(layers * kv * dim, 2 * s),
    wv: fill(layers * kv * dim, s),
    wo: fill(layers * dim * dim, s),
    rmsFfn: fill(layers * dim, 0.1, 1),
    w1: fill(layers * hidden * dim, s),
    w2: fill(layers * dim * hidden, 1 / Math.sqrt(hidden)),
    w3: fill(layers * hidden * dim, s),
    rmsFinal: fill(dim, 0.1, 1),
    freqCis: new Float32Array(seqLen * (dim / heads)),  // legacy files carry it; loaders skip it
  };
  const order = ['embedding', 'rmsAtt', 'wq', 'wk', 'wv', 'wo', 'rmsFfn', 'w1', 'w2', 'w3', 'rmsFinal', 'freqCis'];
  if (!shared) {
    arrays.classifier = fill(vocab * dim, 0.5);
    order.push('classifier');  // run.c: after freq_cis, when vocab_size is negative
  }
  const header = Int32Array.from([dim, hidden, layers, heads, kvHeads, shared ? vocab : -vocab, seqLen]);
  return { header, arrays, order, config: { dim, hidden, layers, heads, kvHeads, vocab: header[5], seqLen } };
}

/** export.py version1_export(): "ak42", version 1, the 7 sizes, shared byte, 256-byte header. */
export function writeLlama2cV1({ config, arrays }) {
  const head = new Uint8Array(256);
  const view = new DataView(head.buffer);
  view.setUint32(0, 0x616b3432, true);
  view.setInt32(4, 1, true);
  const { dim, hidden, layers, heads, kvHeads, seqLen } = config;
  [dim, hidden, layers, heads, kvHeads, Math.abs(config.vocab), seqLen].forEach((v, i) => view.setInt32(8 + 4 * i, v, true));
  head[36] = arrays.classifier ? 0 : 1;
  const order = ['rmsAtt', 'rmsFfn', 'rmsFinal', 'embedding', 'wq', 'wk', 'wv', 'wo', 'w1', 'w2', 'w3'];
  if (arrays.classifier) order.push('classifier');
  const parts = [head, ...order.map((n) => new Uint8Array(arrays[n].buffer.slice(0)))];
  const out = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.byteLength);
  return out;
}

/**
 * Hugging Face files for a synthetic model: { config (object), weights (safetensors bytes) }.
 * `tie` writes no lm_head (tie_word_embeddings: true); `extra` adds config.json fields.
 */
export function writeHuggingFace(model, { dtype = 'F32', tie = !model.arrays.classifier, extra = {} } = {}) {
  const { dim, hidden, layers, heads, kvHeads, seqLen } = model.config;
  const config = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_act: 'silu',
    hidden_size: dim, intermediate_size: hidden, num_hidden_layers: layers, num_attention_heads: heads,
    num_key_value_heads: kvHeads, vocab_size: Math.abs(model.config.vocab), max_position_embeddings: seqLen,
    rms_norm_eps: 1e-5, rope_theta: 10000, tie_word_embeddings: tie, torch_dtype: dtype === 'F32' ? 'float32' : dtype === 'F16' ? 'float16' : 'bfloat16',
    ...extra,
  };
  return { config, weights: writeSafetensors(model, dtype, { lmHead: !tie }) };
}
