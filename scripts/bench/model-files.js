// The model files of `npm run bench:models`, made by the bench from a shape (model-shapes.js) and a
// seed: random weights in the Hugging Face Hub's tensor names and orientation (Llama and GPT-2),
// config.json, and a llama2.c tokenizer file. Each tensor is drawn from its own seed (the bench
// seed and the tensor's name), so every writer (safetensors here, GGUF in model-gguf.js, ONNX in
// model-onnx.js) regenerates the same values one tensor at a time instead of holding a model.

/** The vocabulary: <unk>, <s>, </s>, 256 byte pieces, then made-up words. */
export const SPECIAL_PIECES = 3 + 256;
const BOS = 1;
const EOS = 2;

// A made-up word per id: one capital then lower-case letters, so any run of them splits back
// into the same ids (the agreement check compares decoded text).
export function pieceOf(id, { gguf = false } = {}) {
  if (id === 0) return '<unk>';
  if (id === BOS) return gguf ? '<s>' : '\n<s>\n';
  if (id === EOS) return gguf ? '</s>' : '\n</s>\n';
  if (id < SPECIAL_PIECES) return `<0x${(id - 3).toString(16).toUpperCase().padStart(2, '0')}>`;
  // The capital, then floor(j / 26) in bijective base 26 ('a' = 1 … 'z' = 26), least significant
  // first: dropping a word's last letter gives another word of a smaller id, so every word is
  // reached by merging a prefix with one letter (SentencePiece's merges in llama.cpp, GPT-2's BPE).
  // With 'a' as a zero digit, a word like "Aab" had no prefix "Aa", and llama.cpp split it.
  const j = id - SPECIAL_PIECES;
  let word = String.fromCharCode(65 + (j % 26));
  for (let q = Math.floor(j / 26); q > 0; q = Math.floor((q - 1) / 26)) word += String.fromCharCode(97 + ((q - 1) % 26));
  return word;
}

/**
 * [{ name, shape, kind, fanIn }] of a shape's checkpoint in the Hub's layout (PyTorch
 * [out, in] for nn.Linear, [in, out] for GPT-2's Conv1D).
 */
export function tensorList(s) {
  const { dim: d, hidden: h, vocab: v } = s;
  const kv = (d / s.heads) * s.kvHeads;
  const t = (name, shape, kind, fanIn = shape[shape.length - 1]) => ({ name, shape, kind, fanIn });
  const list = [];
  if (s.arch === 'gpt2') {
    list.push(t('wte.weight', [v, d], 'embedding'), t('wpe.weight', [s.context, d], 'position'));
    for (let l = 0; l < s.layers; l++) {
      const p = `h.${l}.`;
      list.push(t(`${p}ln_1.weight`, [d], 'norm'), t(`${p}ln_1.bias`, [d], 'bias'),
        t(`${p}attn.c_attn.weight`, [d, 3 * d], 'matrix', d), t(`${p}attn.c_attn.bias`, [3 * d], 'bias'),
        t(`${p}attn.c_proj.weight`, [d, d], 'matrix', d), t(`${p}attn.c_proj.bias`, [d], 'bias'),
        t(`${p}ln_2.weight`, [d], 'norm'), t(`${p}ln_2.bias`, [d], 'bias'),
        t(`${p}mlp.c_fc.weight`, [d, h], 'matrix', d), t(`${p}mlp.c_fc.bias`, [h], 'bias'),
        t(`${p}mlp.c_proj.weight`, [h, d], 'matrix', h), t(`${p}mlp.c_proj.bias`, [d], 'bias'));
    }
    list.push(t('ln_f.weight', [d], 'norm'), t('ln_f.bias', [d], 'bias'));
    return list;
  }
  list.push(t('model.embed_tokens.weight', [v, d], 'embedding'));
  for (let l = 0; l < s.layers; l++) {
    const p = `model.layers.${l}.`;
    list.push(t(`${p}input_layernorm.weight`, [d], 'norm'),
      t(`${p}self_attn.q_proj.weight`, [d, d], 'matrix'), t(`${p}self_attn.k_proj.weight`, [kv, d], 'matrix'),
      t(`${p}self_attn.v_proj.weight`, [kv, d], 'matrix'), t(`${p}self_attn.o_proj.weight`, [d, d], 'matrix'),
      t(`${p}post_attention_layernorm.weight`, [d], 'norm'),
      t(`${p}mlp.gate_proj.weight`, [h, d], 'matrix'), t(`${p}mlp.up_proj.weight`, [h, d], 'matrix'),
      t(`${p}mlp.down_proj.weight`, [d, h], 'matrix'));
  }
  list.push(t('model.norm.weight', [d], 'norm'));
  if (!s.tied) list.push(t('lm_head.weight', [v, d], 'embedding'));
  return list;
}

const sizeOf = (shape) => shape.reduce((a, b) => a * b, 1);

// FNV-1a of the name mixed with the seed: each tensor's own stream.
function seedOf(seed, name) {
  let x = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < name.length; i++) x = Math.imul(x ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return x || 1;
}

/**
 * The float32 values of one tensor: uniform with σ = 1/√fan-in for matrices, 0.1 for embeddings
 * (logits of σ ≈ 0.1·√dim: a clear greedy choice), norms 1 ± 0.1, biases ± 0.02. Rows of the
 * special pieces (and GPT-2's <|endoftext|>) are scaled by 0.01 in the embedding and the LM head,
 * so greedy decoding writes made-up words only and never stops early.
 */
export function tensorValues(s, tensor, seed) {
  const n = sizeOf(tensor.shape);
  const out = new Float32Array(n);
  let x = seedOf(seed, tensor.name);
  const half = { embedding: 0.1, position: 0.1, matrix: 1 / Math.sqrt(tensor.fanIn), norm: 0.1, bias: 0.02 }[tensor.kind] * Math.sqrt(3);
  const scale = (2 * half) / 2 ** 32;
  const offset = tensor.kind === 'norm' ? 1 - half : -half;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;  // xorshift32
    out[i] = (x >>> 0) * scale + offset;
  }
  if (tensor.kind === 'embedding') {
    const d = tensor.shape[1];
    const rows = s.arch === 'gpt2' ? [s.vocab - 1] : Array.from({ length: Math.min(SPECIAL_PIECES, s.vocab) }, (_, i) => i);
    for (const r of rows) for (let i = r * d; i < (r + 1) * d; i++) out[i] *= 0.01;
  }
  return out;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 → bfloat16 bits, round to nearest even. */
export function bf16Bits(x) {
  f32[0] = x;
  return ((u32[0] + 0x7fff + ((u32[0] >>> 16) & 1)) >>> 16) & 0xffff;
}

/** float32 → IEEE half bits, round to nearest even (finite values; overflow saturates to ±inf). */
export function f16Bits(x) {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const e = (b >>> 23) & 0xff;
  let m = b & 0x7fffff;
  if (e >= 143) return sign | 0x7c00;
  if (e < 113) {  // subnormal half (or zero)
    if (e < 102) return sign;
    m |= 0x800000;
    const shift = 126 - e;  // 14..24
    const r = m >>> shift, rest = m & ((1 << shift) - 1), halfway = 1 << (shift - 1);
    return sign | (r + (rest > halfway || (rest === halfway && r & 1) ? 1 : 0));
  }
  let h = ((e - 112) << 10) | (m >>> 13);
  const rest = m & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h += 1;  // carries into the exponent correctly
  return sign | h;
}

/** The value a float32 takes after a trip through `dtype` ('F32', 'F16', 'BF16'). */
export function roundTo(x, dtype) {
  if (dtype === 'F32') return Math.fround(x);
  if (dtype === 'BF16') {
    u32[0] = bf16Bits(x) << 16;
    return f32[0];
  }
  const h = f16Bits(x);
  const e = (h >> 10) & 31, m = h & 1023;
  const v = e === 0 ? m * 2 ** -24 : e === 31 ? Infinity : (1 + m / 1024) * 2 ** (e - 15);
  return h & 0x8000 ? -v : v;
}

/** Writes `values` into `out` at `at` as little-endian `dtype`. */
export function writeValues(out, at, values, dtype) {
  if (dtype === 'F32') {
    new Uint8Array(out.buffer, out.byteOffset + at, values.byteLength).set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
    return;
  }
  const bits = dtype === 'F16' ? f16Bits : bf16Bits;
  for (let i = 0, o = at; i < values.length; i++, o += 2) {
    const h = bits(values[i]);
    out[o] = h & 0xff;
    out[o + 1] = h >>> 8;
  }
}

export const BYTES = { F32: 4, F16: 2, BF16: 2 };

/** model.safetensors bytes of a shape's random model, every tensor in `dtype`. */
export function safetensorsBytes(s, dtype, seed) {
  const list = tensorList(s);
  const header = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of list) {
    const bytes = sizeOf(t.shape) * BYTES[dtype];
    header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);  // the data starts 8-byte aligned
  const text = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + text.length + offset);
  new DataView(out.buffer).setUint32(0, text.length, true);
  out.set(text, 8);
  for (const t of list) writeValues(out, 8 + text.length + header[t.name].data_offsets[0], tensorValues(s, t, seed), dtype);
  return out;
}

/**
 * A safetensors file cut into `count` shards of about equal size (whole tensors, in order), as
 * the Hub shards large models (model-0000i-of-0000n.safetensors): { names, shards, index }, where
 * `index` is the model.safetensors.index.json object. The values are the file's, byte for byte.
 */
export function splitSafetensors(bytes, count) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  const data = bytes.subarray(8 + headerLength);
  const tensors = Object.entries(header).filter(([k]) => k !== '__metadata__').sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
  const groups = Array.from({ length: count }, () => []);
  for (const t of tensors) groups[Math.min(count - 1, Math.floor((t[1].data_offsets[0] * count) / data.byteLength))].push(t);
  const names = groups.map((_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.safetensors`);
  const weightMap = {};
  const shards = groups.map((group, i) => {
    const h = { __metadata__: header.__metadata__ ?? { format: 'pt' } };
    let offset = 0;
    for (const [name, t] of group) {
      const size = t.data_offsets[1] - t.data_offsets[0];
      h[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + size] };
      offset += size;
      weightMap[name] = names[i];
    }
    let json = JSON.stringify(h);
    json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
    const text = new TextEncoder().encode(json);
    const out = new Uint8Array(8 + text.length + offset);
    new DataView(out.buffer).setUint32(0, text.length, true);
    out.set(text, 8);
    for (const [name, t] of group) out.set(data.subarray(t.data_offsets[0], t.data_offsets[1]), 8 + text.length + h[name].data_offsets[0]);
    return out;
  });
  return { names, shards, index: { metadata: { total_size: data.byteLength }, weight_map: weightMap } };
}

/** config.json of a shape, as the Hub's Llama / GPT-2 configs spell it. */
export function configJson(s, dtype) {
  const torchDtype = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype];
  if (s.arch === 'gpt2')
    return {
      architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', n_embd: s.dim, n_layer: s.layers, n_head: s.heads,
      n_inner: s.hidden, n_positions: s.context, n_ctx: s.context, vocab_size: s.vocab,
      layer_norm_epsilon: s.normEps, activation_function: 'gelu_new', bos_token_id: s.vocab - 1,
      eos_token_id: s.vocab - 1, tie_word_embeddings: true, torch_dtype: torchDtype,
    };
  return {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: s.dim, intermediate_size: s.hidden,
    num_hidden_layers: s.layers, num_attention_heads: s.heads, num_key_value_heads: s.kvHeads,
    vocab_size: s.vocab, max_position_embeddings: s.context, rms_norm_eps: s.normEps, rope_theta: s.ropeTheta,
    tie_word_embeddings: s.tied, hidden_act: 'silu', bos_token_id: BOS, eos_token_id: EOS, torch_dtype: torchDtype,
  };
}

/** A llama2.c tokenizer file (tokenizer.bin) for the made-up vocabulary of `vocab` pieces. */
export function llama2cTokenizer(vocab) {
  const utf8 = new TextEncoder();
  const pieces = Array.from({ length: vocab }, (_, id) => utf8.encode(pieceOf(id)));
  const out = new Uint8Array(4 + pieces.reduce((sum, p) => sum + 8 + p.length, 0));
  const view = new DataView(out.buffer);
  view.setInt32(0, Math.max(...pieces.map((p) => p.length)), true);
  let at = 4;
  pieces.forEach((p, id) => {
    view.setFloat32(at, -id, true);
    view.setInt32(at + 4, p.length, true);
    out.set(p, at + 8);
    at += 8 + p.length;
  });
  return out;
}

/**
 * `n` prompt ids: BOS, then made-up words drawn from `seed` (never a special piece), the same for
 * every contestant.
 */
export function promptIds(s, n, seed = 7) {
  const ids = [s.arch === 'gpt2' ? s.vocab - 1 : BOS];
  const first = s.arch === 'gpt2' ? 0 : SPECIAL_PIECES;
  const span = (s.arch === 'gpt2' ? s.vocab - 1 : s.vocab) - first;
  let x = seed >>> 0 || 1;
  while (ids.length < n) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    ids.push(first + ((x >>> 0) % span));
  }
  return ids;
}

/**
 * BPE merges that rebuild GPT-2's made-up words from their letters: "prefix last-letter" for
 * every word of two letters or more, ranked by the word's id (a prefix always has a smaller id),
 * so that a run of words (one pre-tokenised word of letters) splits back into the same ids.
 */
export function gpt2Merges(vocab) {
  const merges = [];
  for (let id = 0; id < vocab - 1; id++) {
    const word = pieceOf(id + SPECIAL_PIECES);
    if (word.length > 1) merges.push(`${word.slice(0, -1)} ${word.slice(-1)}`);
  }
  return merges;
}

/**
 * tokenizer.json (the Hub's format: byte-level BPE) of GPT-2's made-up vocabulary: every piece
 * is ASCII letters, which byte-level BPE keeps as they are; the last id is <|endoftext|>.
 */
export function gpt2TokenizerJson(vocab) {
  const pieces = {};
  for (let id = 0; id < vocab - 1; id++) pieces[pieceOf(id + SPECIAL_PIECES)] = id;
  pieces['<|endoftext|>'] = vocab - 1;
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: vocab - 1, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab: pieces, merges: gpt2Merges(vocab) },
  };
}
