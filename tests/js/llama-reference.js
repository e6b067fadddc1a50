// An independent float64 reference for Llama-2-style causal LMs (llama2.c's run.c, read from its
// description): it shares no code with the engine. It parses llama2.c checkpoints (legacy v0
// layout, tied or separate classifier, and export.py version 1), the HF safetensors layout
// (F32/F16/BF16, q/k rows un-permuted back to interleaved RoPE pairs, tie_word_embeddings) and
// the llama2.c tokenizer file itself, and runs one token at a time with a KV cache in
// Float64Array: RMSNorm (eps 1e-5, or config.json's), interleaved RoPE (theta 10000, or
// config.json's), grouped-query attention (query head h reads KV head ⌊h / (heads / kvHeads)⌋),
// SwiGLU, the classifier. One code path serves both run() and greedy(): stepping position by
// position with a cache is the same arithmetic as the full causal sequence, and keeps a
// 500-token prompt under a second.

const BOS = 1, EOS = 2;

/**
 * Parses a llama2.c checkpoint into float64 weights: the legacy layout (7 int32 header, a
 * negative vocab_size meaning a separate classifier after freq_cis) or export.py's version 1
 * ("ak42", 1, the 7 int32, a shared-classifier byte, 256 header bytes, norms first).
 */
export function readLlama2c(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const v1 = view.getUint32(0, true) === 0x616b3432 && view.getInt32(4, true) === 1;
  const h = [];
  for (let i = 0; i < 7; i++) h.push(view.getInt32((v1 ? 8 : 0) + i * 4, true));
  const [dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen] = h;
  const config = { dim, hiddenDim, layers, heads, kvHeads, headDim: dim / heads,
    vocabSize: Math.abs(vocab), seqLen };
  const kvDim = config.headDim * kvHeads;
  let at = v1 ? 256 : 28;
  const take = (count) => {
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++, at += 4) out[i] = view.getFloat32(at, true);
    return out;
  };
  const perLayer = (count) => { const all = take(layers * count);
    return Array.from({ length: layers }, (_, l) => all.subarray(l * count, (l + 1) * count)); };
  if (v1) {
    const w = { rmsAtt: perLayer(dim), rmsFfn: perLayer(dim), rmsFinal: take(dim), embed: take(config.vocabSize * dim) };
    for (const [name, count] of [['wq', dim * dim], ['wk', kvDim * dim], ['wv', kvDim * dim], ['wo', dim * dim],
      ['w1', hiddenDim * dim], ['w2', dim * hiddenDim], ['w3', hiddenDim * dim]]) w[name] = perLayer(count);
    w.classifier = u8[36] ? w.embed : take(config.vocabSize * dim);
    if (at > u8.byteLength) throw new RangeError('checkpoint truncated');
    return { config, weights: w };
  }
  const w = { embed: take(config.vocabSize * dim) };
  w.rmsAtt = perLayer(dim);
  w.wq = perLayer(dim * dim);
  w.wk = perLayer(kvDim * dim);
  w.wv = perLayer(kvDim * dim);
  w.wo = perLayer(dim * dim);
  w.rmsFfn = perLayer(dim);
  w.w1 = perLayer(hiddenDim * dim);
  w.w2 = perLayer(dim * hiddenDim);
  w.w3 = perLayer(hiddenDim * dim);
  w.rmsFinal = take(dim);
  at += seqLen * config.headDim * 4;  // freq_cis_real and _imag: recomputed, not read
  w.classifier = vocab > 0 ? w.embed : take(config.vocabSize * dim);
  if (at > u8.byteLength) throw new RangeError('checkpoint truncated');
  return { config, weights: w };
}

function halfToFloat(bits) {
  const s = bits & 0x8000 ? -1 : 1, e = (bits >> 10) & 31, f = bits & 1023;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** Parses HF `config.json` (object) + `model.safetensors` bytes into the same float64 weights. */
export function readSafetensors(bytes, hf) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(u8.subarray(8, 8 + headerLength)));
  const base = 8 + headerLength;
  const tensor = (name) => {
    const t = header[name];
    if (!t) throw new Error(`missing tensor ${name}`);
    const [begin, end] = t.data_offsets;
    const size = { F32: 4, F16: 2, BF16: 2 }[t.dtype];
    const out = new Float64Array((end - begin) / size);
    for (let i = 0; i < out.length; i++) {
      const o = base + begin + i * size;
      out[i] = t.dtype === 'F32' ? view.getFloat32(o, true)
        : t.dtype === 'F16' ? halfToFloat(view.getUint16(o, true))
        : new Float32Array(new Uint32Array([view.getUint16(o, true) << 16]).buffer)[0];
    }
    return out;
  };
  const dim = hf.hidden_size, heads = hf.num_attention_heads, kvHeads = hf.num_key_value_heads ?? heads;
  // transformers' LlamaConfig defaults: rms_norm_eps 1e-6, rope_theta 10000, untied head.
  const config = { dim, hiddenDim: hf.intermediate_size, layers: hf.num_hidden_layers, heads, kvHeads,
    headDim: dim / heads, vocabSize: hf.vocab_size, seqLen: hf.max_position_embeddings,
    normEps: hf.rms_norm_eps ?? 1e-6, ropeTheta: hf.rope_theta ?? 10000 };
  // HF rows are grouped per head as [c*half + i]; interleaved RoPE wants [2i + c].
  const unpermute = (m, nHeads) => {
    const hd = config.headDim, half = hd / 2, out = new Float64Array(m.length);
    for (let h = 0; h < nHeads; h++)
      for (let c = 0; c < 2; c++)
        for (let i = 0; i < half; i++)
          out.set(m.subarray((h * hd + c * half + i) * dim, (h * hd + c * half + i + 1) * dim),
            (h * hd + 2 * i + c) * dim);
    return out;
  };
  const L = Array.from({ length: config.layers }, (_, l) => `model.layers.${l}.`);
  const w = { embed: tensor('model.embed_tokens.weight') };
  w.rmsAtt = L.map((p) => tensor(p + 'input_layernorm.weight'));
  w.wq = L.map((p) => unpermute(tensor(p + 'self_attn.q_proj.weight'), heads));
  w.wk = L.map((p) => unpermute(tensor(p + 'self_attn.k_proj.weight'), kvHeads));
  w.wv = L.map((p) => tensor(p + 'self_attn.v_proj.weight'));
  w.wo = L.map((p) => tensor(p + 'self_attn.o_proj.weight'));
  w.rmsFfn = L.map((p) => tensor(p + 'post_attention_layernorm.weight'));
  w.w1 = L.map((p) => tensor(p + 'mlp.gate_proj.weight'));
  w.w2 = L.map((p) => tensor(p + 'mlp.down_proj.weight'));
  w.w3 = L.map((p) => tensor(p + 'mlp.up_proj.weight'));
  w.rmsFinal = tensor('model.norm.weight');
  w.classifier = hf.tie_word_embeddings ? w.embed : tensor('lm_head.weight');
  return { config, weights: w };
}

// Pieces are kept as "binary strings" (one char per byte) so lookups compare bytes, like strcmp.
const toBinary = (text) => String.fromCharCode(...new TextEncoder().encode(text));
const binaryToBytes = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const utf8 = new TextDecoder();

/** llama2.c tokenizer file: int32 max length, then per id f32 score, int32 length, bytes. */
export class ReferenceTokenizer {
  constructor(bytes, vocabSize) {
    const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
    this.pieces = []; this.scores = []; this.lookup = new Map();
    let at = 4;
    for (let id = 0; id < vocabSize; id++) {
      this.scores.push(view.getFloat32(at, true));
      const length = view.getInt32(at + 4, true);
      const piece = String.fromCharCode(...u8.subarray(at + 8, at + 8 + length));
      at += 8 + length;
      this.pieces.push(piece);
      if (!this.lookup.has(piece)) this.lookup.set(piece, id);
    }
  }

  /** run.c encode(text, bos = 1, eos = 0): ids with BOS first. */
  encode(text) {
    const bytes = binaryToBytes(toBinary(text));
    const ids = [BOS];
    if (bytes.length > 0) ids.push(this.lookup.get(' '));
    // One UTF-8 code point at a time (a lead byte and up to 3 continuation bytes).
    for (let i = 0; i < bytes.length;) {
      let end = i + 1;
      while (end < bytes.length && (bytes[end] & 0xc0) === 0x80 && end - i < 4) end++;
      const point = String.fromCharCode(...bytes.subarray(i, end));
      const id = this.lookup.get(point);
      if (id !== undefined) ids.push(id);
      else for (let b = i; b < end; b++) ids.push(bytes[b] + 3);
      i = end;
    }
    // Merge the adjacent pair with the best-scoring concatenation (first on ties) until none.
    for (;;) {
      let best = -1e10, bestId = -1, bestAt = -1;
      for (let i = 0; i < ids.length - 1; i++) {
        const id = this.lookup.get(this.pieces[ids[i]] + this.pieces[ids[i + 1]]);
        if (id !== undefined && this.scores[id] > best) { best = this.scores[id]; bestId = id; bestAt = i; }
      }
      if (bestAt < 0) break;
      ids.splice(bestAt, 2, bestId);
    }
    return ids;
  }

  /** run.c decode(prev, token) as bytes: no leading space after BOS, `<0xHH>` is byte HH. */
  pieceBytes(prev, id) {
    let piece = this.pieces[id];
    if (prev === BOS && piece[0] === ' ') piece = piece.slice(1);
    const m = /^<0x([0-9A-Fa-f]{2})>/.exec(piece);
    return m ? String.fromCharCode(parseInt(m[1], 16)) : piece;
  }

  /**
   * Text of ids (the first is taken as following `prev`, BOS by default). With `printable`
   * (run.c safe_printf) a single-byte piece that is neither printable ASCII nor whitespace is
   * dropped; without it, every byte is kept and the whole byte string is read as UTF-8.
   */
  decode(ids, { prev = BOS, printable = false } = {}) {
    let out = '';
    for (const id of ids) {
      const piece = id === BOS || id === EOS ? '' : this.pieceBytes(prev, id);  // run.c never prints them
      prev = id;
      if (printable && piece.length === 1) {
        const c = piece.charCodeAt(0);
        if (!((c >= 0x20 && c < 0x7f) || (c >= 9 && c <= 13))) continue;
      }
      out += piece;
    }
    return utf8.decode(binaryToBytes(out));
  }
}

const dot = (w, row, x, n) => { let s = 0; const o = row * n; for (let j = 0; j < n; j++) s += w[o + j] * x[j]; return s; };
function matvec(out, w, x, rows, n) { for (let i = 0; i < rows; i++) out[i] = dot(w, i, x, n); }
function rmsnorm(out, x, w, eps) {
  let ss = 0;
  for (let i = 0; i < x.length; i++) ss += x[i] * x[i];
  const scale = 1 / Math.sqrt(ss / x.length + eps);
  for (let i = 0; i < x.length; i++) out[i] = w[i] * x[i] * scale;
}

export class ReferenceModel {
  constructor({ config, weights }) { this.config = config; this.w = weights; }

  /** A fresh KV cache: step(id) advances one position and returns { logits, attention }. */
  session() {
    const c = this.config, w = this.w, { dim, headDim: hd, heads, kvHeads, seqLen } = c;
    const kvDim = hd * kvHeads, share = heads / kvHeads;
    const eps = c.normEps ?? 1e-5, theta = c.ropeTheta ?? 10000;  // llama2.c's, unless the config says
    const keys = w.wq.map(() => new Float64Array(seqLen * kvDim));
    const values = w.wq.map(() => new Float64Array(seqLen * kvDim));
    const x = new Float64Array(dim), xb = new Float64Array(dim), q = new Float64Array(dim);
    const att = new Float64Array(dim), hb = new Float64Array(c.hiddenDim), hb2 = new Float64Array(c.hiddenDim);
    const xo = new Float64Array(dim);
    let pos = 0;
    const rope = (vec, offset, count) => {
      for (let i = 0; i < count; i += 2) {
        const freq = theta ** (-(i % hd) / hd), angle = pos * freq;
        const cos = Math.cos(angle), sin = Math.sin(angle);
        const a = vec[offset + i], b = vec[offset + i + 1];
        vec[offset + i] = a * cos - b * sin;
        vec[offset + i + 1] = a * sin + b * cos;
      }
    };
    const step = (id) => {
      if (pos >= seqLen) throw new RangeError('context full');
      x.set(w.embed.subarray(id * dim, (id + 1) * dim));
      const attention = [];
      for (let l = 0; l < c.layers; l++) {
        rmsnorm(xb, x, w.rmsAtt[l], eps);
        matvec(q, w.wq[l], xb, dim, dim);
        const kc = keys[l], vc = values[l], base = pos * kvDim;
        for (let i = 0; i < kvDim; i++) { kc[base + i] = dot(w.wk[l], i, xb, dim); vc[base + i] = dot(w.wv[l], i, xb, dim); }
        rope(q, 0, dim);
        rope(kc, base, kvDim);
        const rows = new Float64Array(heads * (pos + 1));
        for (let h = 0; h < heads; h++) {
          const kvh = Math.floor(h / share) * hd, row = rows.subarray(h * (pos + 1), (h + 1) * (pos + 1));
          let max = -Infinity;
          for (let t = 0; t <= pos; t++) {
            let s = 0;
            for (let i = 0; i < hd; i++) s += q[h * hd + i] * kc[t * kvDim + kvh + i];
            row[t] = s / Math.sqrt(hd);
            if (row[t] > max) max = row[t];
          }
          let sum = 0;
          for (let t = 0; t <= pos; t++) { row[t] = Math.exp(row[t] - max); sum += row[t]; }
          for (let i = 0; i < hd; i++) att[h * hd + i] = 0;
          for (let t = 0; t <= pos; t++) {
            row[t] /= sum;
            for (let i = 0; i < hd; i++) att[h * hd + i] += row[t] * vc[t * kvDim + kvh + i];
          }
        }
        attention.push(rows);
        matvec(xo, w.wo[l], att, dim, dim);
        for (let i = 0; i < dim; i++) x[i] += xo[i];
        rmsnorm(xb, x, w.rmsFfn[l], eps);
        matvec(hb, w.w1[l], xb, c.hiddenDim, dim);
        matvec(hb2, w.w3[l], xb, c.hiddenDim, dim);
        for (let i = 0; i < c.hiddenDim; i++) hb[i] = (hb[i] / (1 + Math.exp(-hb[i]))) * hb2[i];
        matvec(xo, w.w2[l], hb, dim, c.hiddenDim);
        for (let i = 0; i < dim; i++) x[i] += xo[i];
      }
      rmsnorm(xb, x, w.rmsFinal, eps);
      const logits = new Float64Array(c.vocabSize);
      matvec(logits, w.classifier, xb, c.vocabSize, dim);
      pos++;
      return { logits, attention };
    };
    return { step, get position() { return pos; } };
  }

  /** The whole sequence under the causal mask: per layer [heads·n·n] and the last logits. */
  run(ids) {
    const n = ids.length, { heads, layers } = this.config, s = this.session();
    const attention = Array.from({ length: layers }, () => new Float64Array(heads * n * n));
    let logits = null;
    for (let i = 0; i < n; i++) {
      const r = s.step(ids[i]);
      logits = r.logits;
      for (let l = 0; l < layers; l++)
        for (let h = 0; h < heads; h++)
          attention[l].set(r.attention[l].subarray(h * (i + 1), (h + 1) * (i + 1)), (h * n + i) * n);
    }
    return { attention, logits, next: softmax(logits) };
  }

  /** run.c greedy: feed ids, then `steps` forward passes in all (counting the prompt's). */
  greedy(prompt, steps) {
    const s = this.session(), out = [];
    let token = prompt[0], pos = 0;
    while (pos < steps && pos < this.config.seqLen) {
      const { logits } = s.step(token);
      pos++;
      let next;
      if (pos < prompt.length) next = prompt[pos];
      else {
        next = 0;
        for (let i = 1; i < logits.length; i++) if (logits[i] > logits[next]) next = i;
        if (next === BOS) break;
        out.push(next);
      }
      token = next;
    }
    return out;
  }

  /**
   * What generate(prompt, { steps, temperature: 0 }) must return per docs/models.md, from greedy():
   * the ids up to `steps` new tokens, ending before EOS or BOS (stopped 'eos', the token not
   * included), at `steps` ('steps', which wins a tie with the context) or when the context is
   * full ('context').
   */
  greedyOutcome(prompt, steps) {
    const room = this.config.seqLen - prompt.length + 1;  // new tokens until position seqLen − 1
    const budget = Math.min(steps, room);
    const ids = this.greedy(prompt, prompt.length - 1 + budget);
    const eos = ids.indexOf(EOS);
    if (eos >= 0) return { ids: ids.slice(0, eos), stopped: 'eos' };
    if (ids.length < budget) return { ids, stopped: 'eos' };  // greedy() stopped at BOS
    return { ids, stopped: steps <= room ? 'steps' : 'context' };
  }
}

/**
 * run.c's xorshift64* generator, as docs/models.md describes it: one coin per sampled token; seed
 * 0 (which xorshift would keep at 0 for ever) is replaced by the constant the engine names
 * (cpp/include/attnlens/model/sampler.hpp).
 */
export class ReferenceRng {
  static ZERO_SEED = 0x9E3779B97F4A7C15n;
  constructor(seed) {
    this.state = BigInt.asUintN(64, BigInt(seed)) || ReferenceRng.ZERO_SEED;
  }
  u32() {
    let s = this.state;
    s ^= s >> 12n;
    s ^= BigInt.asUintN(64, s << 25n);
    s ^= s >> 27n;
    this.state = s;
    return Number(BigInt.asUintN(64, s * 0x2545F4914F6CDD1Dn) >> 32n);
  }
  /** A float32 in [0, 1): the top 24 bits over 2^24 (exact). */
  f32() {
    return (this.u32() >>> 8) / 16777216;
  }
}

/**
 * run.c's sample_topp (topP < 1) or sample_mult, on probabilities rounded to float32 and summed in
 * float32 as run.c does; candidates of equal probability keep id order (docs/models.md).
 */
export function sampleReference(probs, topP, coin) {
  const f = Math.fround, n = probs.length, p = Float32Array.from(probs);
  const mult = (order) => {
    let cdf = 0;
    for (const i of order) if (coin < (cdf = f(cdf + p[i]))) return i;
    return order.at(-1);
  };
  if (!(topP < 1)) return mult([...p.keys()]);
  const cutoff = f(f(1 - f(topP)) / (n - 1));
  const order = [...p.keys()].filter((i) => p[i] >= cutoff).sort((a, b) => p[b] - p[a] || a - b);
  if (order.length === 0) return mult([...p.keys()]);
  let cumulative = 0, last = order.length - 1;
  for (let i = 0; i < order.length; i++) {
    cumulative = f(cumulative + p[order[i]]);
    if (cumulative > f(topP)) { last = i; break; }
  }
  const r = f(coin * cumulative);
  let cdf = 0;
  for (let i = 0; i <= last; i++) if (r < (cdf = f(cdf + p[order[i]]))) return order[i];
  return order[last];
}

export function softmax(logits, temperature = 1) {
  const p = new Float64Array(logits.length);
  let max = -Infinity, sum = 0;
  for (const v of logits) max = Math.max(max, v / temperature);
  for (let i = 0; i < p.length; i++) { p[i] = Math.exp(logits[i] / temperature - max); sum += p[i]; }
  for (let i = 0; i < p.length; i++) p[i] /= sum;
  return p;
}
