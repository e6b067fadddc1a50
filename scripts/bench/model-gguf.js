// GGUF v3 of the bench's random models (model-files.js), for llama.cpp's wasm build
// (@wllama/wllama): the same values as the safetensors files, in llama.cpp's tensor names and
// layouts. Llama: q/k rows go from the Hub's rotate-half order back to llama.cpp's interleaved
// order (the inverse of convert_hf_to_gguf.py's permute). GPT-2: Conv1D weights ([in, out])
// transposed to [out, in]. Norms and biases stay F32 in an F16 file, as llama.cpp writes them.
import { BYTES, SPECIAL_PIECES, gpt2Merges, pieceOf, tensorList, tensorValues, writeValues } from './model-files.js';

const ALIGN = 32;
const TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 };
const GGML = { F32: 0, F16: 1 };

// Hub name → [GGUF name, transform]; null transform keeps the values.
function ggufName(s, name) {
  const m = name.match(/^(?:model\.layers|h)\.(\d+)\.(.+)$/);
  if (s.arch === 'gpt2') {
    const top = { 'wte.weight': 'token_embd.weight', 'wpe.weight': 'position_embd.weight', 'ln_f.weight': 'output_norm.weight', 'ln_f.bias': 'output_norm.bias' };
    if (top[name]) return top[name];
    const part = { 'ln_1': 'attn_norm', 'attn.c_attn': 'attn_qkv', 'attn.c_proj': 'attn_output', 'ln_2': 'ffn_norm', 'mlp.c_fc': 'ffn_up', 'mlp.c_proj': 'ffn_down' };
    const [, l, rest] = m;
    const [, base, kind] = rest.match(/^(.+)\.(weight|bias)$/);
    return `blk.${l}.${part[base]}.${kind}`;
  }
  const top = { 'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight', 'lm_head.weight': 'output.weight' };
  if (top[name]) return top[name];
  const part = {
    'input_layernorm.weight': 'attn_norm', 'self_attn.q_proj.weight': 'attn_q', 'self_attn.k_proj.weight': 'attn_k',
    'self_attn.v_proj.weight': 'attn_v', 'self_attn.o_proj.weight': 'attn_output', 'post_attention_layernorm.weight': 'ffn_norm',
    'mlp.gate_proj.weight': 'ffn_gate', 'mlp.up_proj.weight': 'ffn_up', 'mlp.down_proj.weight': 'ffn_down',
  };
  return `blk.${m[1]}.${part[m[2]]}.weight`;
}

// Rows of each head from rotate-half order (i, then i + hd/2) to interleaved (2i, 2i + 1).
function unpermuteRows(w, heads, hd, cols) {
  const out = new Float32Array(w.length);
  for (let h = 0; h < heads; h++)
    for (let c = 0; c < 2; c++)
      for (let i = 0; i < hd / 2; i++)
        out.set(w.subarray((h * hd + c * (hd / 2) + i) * cols, (h * hd + c * (hd / 2) + i + 1) * cols), (h * hd + 2 * i + c) * cols);
  return out;
}

function transpose(w, rows, cols) {
  const out = new Float32Array(w.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = w[r * cols + c];
  return out;
}

// { name, dims (innermost first), dtype, values() } of every tensor, in GGUF's layout.
function ggufTensors(s, dtype, seed) {
  return tensorList(s).map((t) => {
    const name = ggufName(s, t.name);
    const vector = t.shape.length === 1;
    let shape = t.shape;  // [out, in] (row-major) after the transform below
    let transform = (v) => v;
    if (s.arch === 'gpt2' && !vector && !name.startsWith('token_embd') && !name.startsWith('position_embd')) {
      shape = [t.shape[1], t.shape[0]];
      transform = (v) => transpose(v, t.shape[0], t.shape[1]);
    } else if (s.arch === 'llama' && /attn_[qk]\.weight$/.test(name)) {
      const heads = name.includes('attn_q') ? s.heads : s.kvHeads;
      transform = (v) => unpermuteRows(v, heads, s.dim / s.heads, s.dim);
    }
    return {
      name, dims: [...shape].reverse(), dtype: vector || dtype === 'F32' ? 'F32' : 'F16',
      values: () => transform(tensorValues(s, t, seed)),
    };
  });
}

class Writer {
  parts = [];
  size = 0;
  push(bytes) { this.parts.push(bytes); this.size += bytes.byteLength; }
  u32(x) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, x, true); this.push(b); }
  i32(x) { const b = new Uint8Array(4); new DataView(b.buffer).setInt32(0, x, true); this.push(b); }
  u64(x) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(x), true); this.push(b); }
  f32(x) { const b = new Uint8Array(4); new DataView(b.buffer).setFloat32(0, x, true); this.push(b); }
  string(s) { const b = new TextEncoder().encode(s); this.u64(b.length); this.push(b); }
  value(type, v) {
    if (type === 'u32') this.u32(v);
    else if (type === 'i32') this.i32(v);
    else if (type === 'f32') this.f32(v);
    else if (type === 'bool') this.push(new Uint8Array([v ? 1 : 0]));
    else if (type === 'string') this.string(v);
  }
  kv(key, type, v) {
    this.string(key);
    if (Array.isArray(type)) {  // ['array', elementType]
      this.u32(TYPE.array);
      this.u32(TYPE[type[1]]);
      this.u64(v.length);
      for (const x of v) this.value(type[1], x);
    } else {
      this.u32(TYPE[type]);
      this.value(type, v);
    }
  }
}

function metadata(s, dtype) {
  const a = s.arch;
  // GPT-2's made-up words start at id 0 (as in model-files.js's tokenizer.json).
  const tokens = Array.from({ length: s.vocab }, (_, id) => pieceOf(a === 'gpt2' ? id + SPECIAL_PIECES : id, { gguf: true }));
  const kvs = [
    ['general.architecture', 'string', a], ['general.name', 'string', `attnlens-bench ${s.name}`],
    ['general.alignment', 'u32', ALIGN], ['general.file_type', 'u32', dtype === 'F32' ? 0 : 1],
    [`${a}.context_length`, 'u32', s.context], [`${a}.embedding_length`, 'u32', s.dim],
    [`${a}.block_count`, 'u32', s.layers], [`${a}.feed_forward_length`, 'u32', s.hidden],
    [`${a}.attention.head_count`, 'u32', s.heads],
  ];
  if (a === 'llama') {
    kvs.push([`${a}.attention.head_count_kv`, 'u32', s.kvHeads], [`${a}.rope.dimension_count`, 'u32', s.dim / s.heads],
      [`${a}.rope.freq_base`, 'f32', s.ropeTheta], [`${a}.attention.layer_norm_rms_epsilon`, 'f32', s.normEps],
      ['tokenizer.ggml.model', 'string', 'llama'], ['tokenizer.ggml.tokens', ['array', 'string'], tokens],
      ['tokenizer.ggml.scores', ['array', 'f32'], tokens.map((_, id) => -id)],
      ['tokenizer.ggml.token_type', ['array', 'i32'], tokens.map((_, id) => (id === 0 ? 2 : id < 3 ? 3 : id < SPECIAL_PIECES ? 6 : 1))],
      ['tokenizer.ggml.bos_token_id', 'u32', 1], ['tokenizer.ggml.eos_token_id', 'u32', 2],
      ['tokenizer.ggml.unknown_token_id', 'u32', 0]);
  } else {
    const eos = s.vocab - 1;
    tokens[eos] = '<|endoftext|>';
    kvs.push([`${a}.attention.layer_norm_epsilon`, 'f32', s.normEps],
      ['tokenizer.ggml.model', 'string', 'gpt2'], ['tokenizer.ggml.pre', 'string', 'gpt-2'],
      ['tokenizer.ggml.tokens', ['array', 'string'], tokens],
      ['tokenizer.ggml.token_type', ['array', 'i32'], tokens.map((_, id) => (id === eos ? 3 : 1))],
      ['tokenizer.ggml.merges', ['array', 'string'], gpt2Merges(s.vocab)],
      ['tokenizer.ggml.bos_token_id', 'u32', eos], ['tokenizer.ggml.eos_token_id', 'u32', eos]);
  }
  // wllama takes prompts as text only: llama.cpp adds the BOS and, with no space prefix, splits the
  // made-up words back into the ids ours is given (checked by the bench: same prompt length,
  // same greedy text).
  kvs.push(['tokenizer.ggml.add_bos_token', 'bool', a === 'llama'], ['tokenizer.ggml.add_eos_token', 'bool', false],
    ['tokenizer.ggml.add_space_prefix', 'bool', false]);
  return kvs;
}

/** GGUF v3 bytes of a shape's random model: `dtype` 'F32' or 'F16' (norms and biases F32). */
export function ggufBytes(s, dtype, seed) {
  if (!(dtype in GGML)) throw new Error(`ggufBytes: dtype must be F32 or F16 (got ${dtype})`);
  const tensors = ggufTensors(s, dtype, seed);
  const kvs = metadata(s, dtype);
  const w = new Writer();
  w.push(new TextEncoder().encode('GGUF'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kvs.length);
  for (const [k, type, v] of kvs) w.kv(k, type, v);
  let offset = 0;
  for (const t of tensors) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML[t.dtype]);
    w.u64(offset);
    t.offset = offset;
    const bytes = t.dims.reduce((a, b) => a * b, 1) * BYTES[t.dtype];
    offset += Math.ceil(bytes / ALIGN) * ALIGN;
  }
  const dataStart = Math.ceil(w.size / ALIGN) * ALIGN;
  const out = new Uint8Array(dataStart + offset);
  let at = 0;
  for (const p of w.parts) out.set(p, at), (at += p.byteLength);
  for (const t of tensors) writeValues(out, dataStart + t.offset, t.values(), t.dtype);
  return out;
}
