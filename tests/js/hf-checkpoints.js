// Random-weight checkpoints in the Hugging Face Hub's exact layout (tensor names, prefixes,
// Conv1D [in, out] orientation, tied heads, the buffers old exports store), small enough for
// tests, written as a model folder: config.json, model.safetensors (or shards + index) in F32,
// F16 or BF16, and the tokenizer files of tests/js/hf-fixtures.js.
//   const ckpt = gpt2Checkpoint({ seed: 1 });
//   const dir = writeModelFolder(ckpt, { dtype: 'F16', tokenizer: 'gpt2' });
//   reference(ckpt.config, roundedTensors(ckpt, 'F16'), ids)   // tests/js/transformer-reference.js
import { closeSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { writeTokenizerFiles } from './hf-fixtures.js';
import { roundTo, toBf16, toF16 } from './lm-files.js';
import { random } from './reference.js';

// Weights of scale ~0.02–0.4 (as trained models have), norms near 1. `lazy`: descriptions
// ({ lazy, length, scale, mean }) that writeModelFolder fills as it writes (for checkpoints of
// real sizes, whose float32 values would not fit in a test's memory twice).
function filler(seed, lazy = false) {
  const next = random(seed);
  if (lazy) return (n, scale = 0.2, mean = 0) => ({ lazy: true, length: n, scale, mean });
  return (n, scale = 0.2, mean = 0) => Float32Array.from({ length: n }, () => mean + scale * (2 * next() - 1));
}

/**
 * GPT-2 (GPT2LMHeadModel): Conv1D weights [in, out], c_attn fused, the attn.bias buffers.
 * `lazy`: random values made while the folder is written (F16/BF16 only; no reference for them).
 */
export function gpt2Checkpoint({ seed = 1, dim = 32, layers = 2, heads = 4, positions = 64, vocab = 50257, prefix = '', lazy = false } = {}) {
  const w = filler(seed, lazy), t = [];
  const add = (name, shape, values) => t.push([`${prefix}${name}`, shape, values]);
  add('wte.weight', [vocab, dim], w(vocab * dim, 0.3));
  add('wpe.weight', [positions, dim], w(positions * dim, 0.1));
  const mask = new Float32Array(positions * positions);
  for (let i = 0; i < positions; i++) for (let j = 0; j <= i; j++) mask[i * positions + j] = 1;
  for (let l = 0; l < layers; l++) {
    const p = `h.${l}.`;
    add(`${p}ln_1.weight`, [dim], w(dim, 0.2, 1)), add(`${p}ln_1.bias`, [dim], w(dim, 0.1));
    add(`${p}attn.bias`, [1, 1, positions, positions], mask);
    add(`${p}attn.c_attn.weight`, [dim, 3 * dim], w(3 * dim * dim, 0.3)), add(`${p}attn.c_attn.bias`, [3 * dim], w(3 * dim, 0.1));
    add(`${p}attn.c_proj.weight`, [dim, dim], w(dim * dim, 0.2)), add(`${p}attn.c_proj.bias`, [dim], w(dim, 0.1));
    add(`${p}ln_2.weight`, [dim], w(dim, 0.2, 1)), add(`${p}ln_2.bias`, [dim], w(dim, 0.1));
    add(`${p}mlp.c_fc.weight`, [dim, 4 * dim], w(4 * dim * dim, 0.2)), add(`${p}mlp.c_fc.bias`, [4 * dim], w(4 * dim, 0.1));
    add(`${p}mlp.c_proj.weight`, [4 * dim, dim], w(4 * dim * dim, 0.1)), add(`${p}mlp.c_proj.bias`, [dim], w(dim, 0.1));
  }
  add('ln_f.weight', [dim], w(dim, 0.2, 1)), add('ln_f.bias', [dim], w(dim, 0.1));
  const config = { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', activation_function: 'gelu_new',
    n_embd: dim, n_layer: layers, n_head: heads, n_positions: positions, n_ctx: positions, n_inner: null,
    vocab_size: vocab, layer_norm_epsilon: 1e-5, bos_token_id: 50256, eos_token_id: 50256 };
  return { config, tensors: t };
}

/** BERT (BertForMaskedLM or BertModel); `gammaBeta` names LayerNorms as old checkpoints do. */
export function bertCheckpoint({ seed = 2, dim = 32, layers = 2, heads = 4, ffn = 64, positions = 64, vocab = 30522,
  prefix = 'bert.', mlm = true, gammaBeta = false } = {}) {
  const w = filler(seed), t = [];
  const ln = (name) => (gammaBeta ? [`${name}.gamma`, `${name}.beta`] : [`${name}.weight`, `${name}.bias`]);
  const add = (name, shape, values, top = false) => t.push([`${top ? '' : prefix}${name}`, shape, values]);
  const norm = (name, top) => {
    const [g, b] = ln(name);
    add(g, [dim], w(dim, 0.2, 1), top), add(b, [dim], w(dim, 0.1), top);
  };
  const dense = (name, out, inn, top) => {
    add(`${name}.weight`, [out, inn], w(out * inn, 0.25), top), add(`${name}.bias`, [out], w(out, 0.1), top);
  };
  add('embeddings.word_embeddings.weight', [vocab, dim], w(vocab * dim, 0.3));
  add('embeddings.position_embeddings.weight', [positions, dim], w(positions * dim, 0.1));
  add('embeddings.token_type_embeddings.weight', [2, dim], w(2 * dim, 0.1));
  norm('embeddings.LayerNorm');
  for (let l = 0; l < layers; l++) {
    const p = `encoder.layer.${l}.`;
    for (const n of ['query', 'key', 'value']) dense(`${p}attention.self.${n}`, dim, dim);
    dense(`${p}attention.output.dense`, dim, dim), norm(`${p}attention.output.LayerNorm`);
    dense(`${p}intermediate.dense`, ffn, dim), dense(`${p}output.dense`, dim, ffn), norm(`${p}output.LayerNorm`);
  }
  if (mlm) {
    dense('cls.predictions.transform.dense', dim, dim, true), norm('cls.predictions.transform.LayerNorm', true);
    add('cls.predictions.bias', [vocab], w(vocab, 0.1), true);
  } else {
    dense('pooler.dense', dim, dim);  // BertModel's pooler: not used for attention or hidden states
  }
  const config = { architectures: [mlm ? 'BertForMaskedLM' : 'BertModel'], model_type: 'bert', hidden_size: dim,
    num_hidden_layers: layers, num_attention_heads: heads, intermediate_size: ffn, hidden_act: 'gelu',
    max_position_embeddings: positions, type_vocab_size: 2, vocab_size: vocab, layer_norm_eps: 1e-12,
    position_embedding_type: 'absolute', pad_token_id: 0 };
  return { config, tensors: t };
}

/** The Llama family: 'llama', 'mistral' or 'qwen2' (q/k/v biases), GQA, tied or an lm_head. */
export function llamaCheckpoint({ seed = 3, type = 'llama', dim = 32, layers = 2, heads = 4, kvHeads = 2, ffn = 48,
  vocab = 512, context = 128, tied = false } = {}) {
  const w = filler(seed), t = [];
  const hd = dim / heads, kv = kvHeads * hd, bias = type === 'qwen2';
  const add = (name, shape, values) => t.push([name, shape, values]);
  add('model.embed_tokens.weight', [vocab, dim], w(vocab * dim, 0.4));
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}.`;
    add(`${p}input_layernorm.weight`, [dim], w(dim, 0.2, 1));
    for (const [n, out] of [['q', dim], ['k', kv], ['v', kv]]) {
      add(`${p}self_attn.${n}_proj.weight`, [out, dim], w(out * dim, 0.4));
      if (bias) add(`${p}self_attn.${n}_proj.bias`, [out], w(out, 0.2));
    }
    add(`${p}self_attn.o_proj.weight`, [dim, dim], w(dim * dim, 0.3));
    add(`${p}post_attention_layernorm.weight`, [dim], w(dim, 0.2, 1));
    add(`${p}mlp.gate_proj.weight`, [ffn, dim], w(ffn * dim, 0.3));
    add(`${p}mlp.up_proj.weight`, [ffn, dim], w(ffn * dim, 0.3));
    add(`${p}mlp.down_proj.weight`, [dim, ffn], w(ffn * dim, 0.3));
  }
  add('model.norm.weight', [dim], w(dim, 0.2, 1));
  if (!tied) add('lm_head.weight', [vocab, dim], w(vocab * dim, 0.3));
  const arch = { llama: 'LlamaForCausalLM', mistral: 'MistralForCausalLM', qwen2: 'Qwen2ForCausalLM' }[type];
  const config = { architectures: [arch], model_type: type, hidden_size: dim, intermediate_size: ffn,
    num_hidden_layers: layers, num_attention_heads: heads, num_key_value_heads: kvHeads, vocab_size: vocab,
    max_position_embeddings: context, rms_norm_eps: 1e-6, rope_theta: type === 'llama' ? 10000 : 1000000,
    hidden_act: 'silu', tie_word_embeddings: tied, bos_token_id: 1, eos_token_id: 2,
    ...(type === 'mistral' ? { sliding_window: context } : {}), ...(type === 'qwen2' ? { use_sliding_window: false } : {}) };
  return { config, tensors: t };
}

/** The tensors as the reference reads them: Map name → { shape, values } rounded as `dtype` stores them. */
export function roundedTensors({ tensors }, dtype = 'F32') {
  return new Map(tensors.map(([name, shape, values]) =>
    [name, { shape, values: dtype === 'F32' ? Float64Array.from(values) : Float64Array.from(values, (x) => roundTo(x, dtype)) }]));
}

// The 8-byte length and the JSON header of a safetensors file of `tensors`; `size` its data bytes.
function safetensorsHeader(tensors, dtype) {
  const element = dtype === 'F32' ? 4 : 2;
  const header = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape, values] of tensors) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + values.length * element] };
    offset += values.length * element;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);  // the data starts 8-byte aligned, as safetensors writes it
  const text = new TextEncoder().encode(json);
  const head = new Uint8Array(8 + text.length);
  new DataView(head.buffer).setUint32(0, text.length, true);
  head.set(text, 8);
  return { head, size: offset };
}

/** safetensors bytes of `tensors` ([name, shape, Float32Array][]), all in `dtype`. */
export function safetensorsBytes(tensors, dtype = 'F32') {
  const { head, size: offset } = safetensorsHeader(tensors, dtype);
  const out = new Uint8Array(head.length + offset);
  const view = new DataView(out.buffer);
  out.set(head);
  let at = head.length;
  for (const [, , values] of tensors)
    for (const x of values) {
      if (dtype === 'F32') view.setFloat32(at, x, true), (at += 4);
      else view.setUint16(at, dtype === 'F16' ? toF16(x) : toBf16(x), true), (at += 2);
    }
  return out;
}

// A safetensors file written tensor by tensor; lazy tensors get random 16-bit values drawn from a
// table of 4,096 values of their scale (fast enough for 124M parameters).
function writeSafetensorsFile(file, tensors, dtype) {
  if (dtype === 'F32') throw new Error('lazy checkpoints are written in F16 or BF16');
  const convert = dtype === 'F16' ? toF16 : toBf16;
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, safetensorsHeader(tensors, dtype).head);
    let state = 0x9e3779b9;
    for (const [, , values] of tensors) {
      const out = new Uint16Array(values.length);
      if (values.lazy) {
        const table = Uint16Array.from({ length: 4096 }, (_, i) => convert(values.mean + values.scale * (2 * (i + 0.5) / 4096 - 1)));
        for (let i = 0; i < out.length; i++) {
          state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
          out[i] = table[state & 4095];
        }
      } else {
        for (let i = 0; i < out.length; i++) out[i] = convert(values[i]);
      }
      writeSync(fd, new Uint8Array(out.buffer));
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a model folder (a fresh temporary directory unless `dir`) and returns its path:
 * config.json, the weights (one file, or `shards` files with model.safetensors.index.json) and
 * the tokenizer files of `tokenizer` ('gpt2', 'bert', 'llama').
 */
export function writeModelFolder({ config, tensors }, { dtype = 'F32', shards = 1, tokenizer, dir } = {}) {
  const folder = dir ?? mkdtempSync(path.join(os.tmpdir(), 'attnlens-hf-'));
  writeFileSync(path.join(folder, 'config.json'), JSON.stringify(config, null, 2));
  if (tensors.some(([, , values]) => values.lazy)) {
    if (shards !== 1) throw new Error('lazy checkpoints are written as one model.safetensors');
    writeSafetensorsFile(path.join(folder, 'model.safetensors'), tensors, dtype);
  } else if (shards === 1) {
    writeFileSync(path.join(folder, 'model.safetensors'), safetensorsBytes(tensors, dtype));
  } else {
    const per = Math.ceil(tensors.length / shards), weightMap = {};
    for (let s = 0; s < shards; s++) {
      const file = `model-${String(s + 1).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.safetensors`;
      const part = tensors.slice(s * per, (s + 1) * per);
      for (const [name] of part) weightMap[name] = file;
      writeFileSync(path.join(folder, file), safetensorsBytes(part, dtype));
    }
    writeFileSync(path.join(folder, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap }));
  }
  if (tokenizer) writeTokenizerFiles(folder, tokenizer);
  return folder;
}

/** DistilBERT (DistilBertForMaskedLM or DistilBertModel): BERT's block under other names, no token types. */
export function distilbertCheckpoint({ seed = 4, dim = 32, layers = 2, heads = 4, ffn = 64, positions = 64, vocab = 30522, mlm = true } = {}) {
  const w = filler(seed), t = [];
  const add = (name, shape, values) => t.push([name, shape, values]);
  const norm = (name) => (add(`${name}.weight`, [dim], w(dim, 0.2, 1)), add(`${name}.bias`, [dim], w(dim, 0.1)));
  const dense = (name, out, inn) => (add(`${name}.weight`, [out, inn], w(out * inn, 0.25)), add(`${name}.bias`, [out], w(out, 0.1)));
  add('distilbert.embeddings.word_embeddings.weight', [vocab, dim], w(vocab * dim, 0.3));
  add('distilbert.embeddings.position_embeddings.weight', [positions, dim], w(positions * dim, 0.1));
  norm('distilbert.embeddings.LayerNorm');
  for (let l = 0; l < layers; l++) {
    const p = `distilbert.transformer.layer.${l}.`;
    for (const n of ['q_lin', 'k_lin', 'v_lin', 'out_lin']) dense(`${p}attention.${n}`, dim, dim);
    norm(`${p}sa_layer_norm`), dense(`${p}ffn.lin1`, ffn, dim), dense(`${p}ffn.lin2`, dim, ffn), norm(`${p}output_layer_norm`);
  }
  if (mlm) {
    dense('vocab_transform', dim, dim), norm('vocab_layer_norm');
    add('vocab_projector.bias', [vocab], w(vocab, 0.1));
  }
  const config = { architectures: [mlm ? 'DistilBertForMaskedLM' : 'DistilBertModel'], model_type: 'distilbert', dim,
    n_layers: layers, n_heads: heads, hidden_dim: ffn, activation: 'gelu', max_position_embeddings: positions,
    vocab_size: vocab, sinusoidal_pos_embds: false, pad_token_id: 0 };
  return { config, tensors: t };
}
