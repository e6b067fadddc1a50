// A float64 reference forward pass for Hugging Face checkpoints, written from the transformers
// semantics of each architecture (modeling_gpt2.py, modeling_bert.py, modeling_llama.py /
// modeling_qwen2.py), reading the tensors by their Hub names. Plain loops; no code shared with
// the engine.
//   reference(config, tensors, ids, typeIds?) → { attention: [layer][h·n·n] (Float64Array),
//     logits: Float64Array (causal LM: the last position's [vocab]; masked LM: [n·vocab]),
//     hidden: Float64Array [n·dim] }
// `tensors`: Map name → { shape, values (numbers, already rounded as the file stores them) }.

function get(tensors, ...names) {
  for (const n of names) if (tensors.has(n)) return tensors.get(n).values;
  throw new Error(`reference: none of ${names.join(', ')} in the checkpoint`);
}

// y[out] = W x (+ b), W in nn.Linear's [out, in] layout.
function linear(x, W, out, b) {
  const inn = x.length, y = new Float64Array(out);
  for (let o = 0; o < out; o++) {
    let s = b ? b[o] : 0;
    for (let c = 0; c < inn; c++) s += W[o * inn + c] * x[c];
    y[o] = s;
  }
  return y;
}

// y[out] = x W (+ b), W in Conv1D's [in, out] layout (GPT-2).
function conv1d(x, W, out, b) {
  const y = new Float64Array(out);
  for (let o = 0; o < out; o++) {
    let s = b ? b[o] : 0;
    for (let c = 0; c < x.length; c++) s += x[c] * W[c * out + o];
    y[o] = s;
  }
  return y;
}

function layerNorm(x, w, b, eps) {
  let mean = 0;
  for (const v of x) mean += v;
  mean /= x.length;
  let variance = 0;
  for (const v of x) variance += (v - mean) ** 2;
  variance /= x.length;
  const r = 1 / Math.sqrt(variance + eps);
  return x.map((v, j) => (v - mean) * r * w[j] + (b ? b[j] : 0));
}

function rmsNorm(x, w, eps) {
  let s = 0;
  for (const v of x) s += v * v;
  const r = 1 / Math.sqrt(s / x.length + eps);
  return x.map((v, j) => v * r * w[j]);
}

const geluTanh = (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
// erf by Abramowitz–Stegun 7.1.26 is too coarse for 1e-4; this series/continued fraction is exact to ~1e-15.
function erf(x) {
  const t = Math.abs(x);
  let r;
  if (t < 3) {
    let sum = t, term = t;
    for (let n = 1; n < 200; n++) {
      term *= -t * t / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17) break;
    }
    r = (2 / Math.sqrt(Math.PI)) * sum;
  } else {
    // erfc continued fraction
    let f = 0;
    for (let n = 60; n >= 1; n--) f = (n / 2) / (t + f);
    r = 1 - Math.exp(-t * t) / Math.sqrt(Math.PI) / (t + f);
  }
  return x < 0 ? -r : r;
}
const geluErf = (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));
const silu = (x) => x / (1 + Math.exp(-x));

function row(values, r, width) {
  return Float64Array.from(values.subarray ? values.subarray(r * width, (r + 1) * width) : values.slice(r * width, (r + 1) * width));
}

// softmax(q kᵀ / √d) per head, causal or not; q [n][H·hd], k/v [n][KV·hd]. Returns weights
// [H·n·n] and the context [n][H·hd].
function attend(q, k, v, H, KV, hd, causal) {
  const n = q.length, group = H / KV;
  const weights = new Float64Array(H * n * n);
  const ctx = Array.from({ length: n }, () => new Float64Array(H * hd));
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / group);
    for (let i = 0; i < n; i++) {
      const last = causal ? i : n - 1;
      const s = new Float64Array(last + 1);
      let max = -Infinity;
      for (let j = 0; j <= last; j++) {
        let dot = 0;
        for (let c = 0; c < hd; c++) dot += q[i][h * hd + c] * k[j][g * hd + c];
        s[j] = dot / Math.sqrt(hd);
        max = Math.max(max, s[j]);
      }
      let sum = 0;
      for (let j = 0; j <= last; j++) sum += s[j] = Math.exp(s[j] - max);
      for (let j = 0; j <= last; j++) {
        const p = s[j] / sum;
        weights[(h * n + i) * n + j] = p;
        for (let c = 0; c < hd; c++) ctx[i][h * hd + c] += p * v[j][g * hd + c];
      }
    }
  }
  return { weights, ctx };
}

function gpt2(config, t, ids) {
  const d = config.n_embd, H = config.n_head, hd = d / H, L = config.n_layer, V = config.vocab_size;
  const eps = config.layer_norm_epsilon ?? 1e-5, inner = config.n_inner ?? 4 * d;
  const p = (n) => get(t, n, `transformer.${n}`);
  const wte = p('wte.weight'), wpe = p('wpe.weight');
  let x = ids.map((id, i) => row(wte, id, d).map((v, j) => v + wpe[i * d + j]));
  const attention = [];
  for (let l = 0; l < L; l++) {
    const q = [], k = [], v = [];
    for (const xi of x) {
      const a = layerNorm(xi, p(`h.${l}.ln_1.weight`), p(`h.${l}.ln_1.bias`), eps);
      const qkv = conv1d(a, p(`h.${l}.attn.c_attn.weight`), 3 * d, p(`h.${l}.attn.c_attn.bias`));
      q.push(qkv.slice(0, d)), k.push(qkv.slice(d, 2 * d)), v.push(qkv.slice(2 * d));
    }
    const { weights, ctx } = attend(q, k, v, H, H, hd, true);
    attention.push(weights);
    x = x.map((xi, i) => {
      const o = conv1d(ctx[i], p(`h.${l}.attn.c_proj.weight`), d, p(`h.${l}.attn.c_proj.bias`));
      const h = xi.map((u, j) => u + o[j]);
      const m = layerNorm(h, p(`h.${l}.ln_2.weight`), p(`h.${l}.ln_2.bias`), eps);
      const f = conv1d(conv1d(m, p(`h.${l}.mlp.c_fc.weight`), inner, p(`h.${l}.mlp.c_fc.bias`)).map(geluTanh),
        p(`h.${l}.mlp.c_proj.weight`), d, p(`h.${l}.mlp.c_proj.bias`));
      return h.map((u, j) => u + f[j]);
    });
  }
  x = x.map((xi) => layerNorm(xi, p('ln_f.weight'), p('ln_f.bias'), eps));
  const logits = linear(x[x.length - 1], wte, V);
  return { attention, logits, hidden: concat(x) };
}

function bert(config, t, ids, typeIds) {
  const d = config.hidden_size, H = config.num_attention_heads, hd = d / H, L = config.num_hidden_layers;
  const V = config.vocab_size, eps = config.layer_norm_eps ?? 1e-12, ffn = config.intermediate_size;
  const p = (n) => get(t, n, `bert.${n}`, n.replace(/LayerNorm\.weight$/, 'LayerNorm.gamma').replace(/LayerNorm\.bias$/, 'LayerNorm.beta'),
    `bert.${n}`.replace(/LayerNorm\.weight$/, 'LayerNorm.gamma').replace(/LayerNorm\.bias$/, 'LayerNorm.beta'));
  const word = p('embeddings.word_embeddings.weight'), pos = p('embeddings.position_embeddings.weight');
  const type = p('embeddings.token_type_embeddings.weight');
  let x = ids.map((id, i) => {
    const tt = typeIds ? typeIds[i] : 0;
    const e = row(word, id, d).map((v, j) => v + pos[i * d + j] + type[tt * d + j]);
    return layerNorm(e, p('embeddings.LayerNorm.weight'), p('embeddings.LayerNorm.bias'), eps);
  });
  const attention = [];
  for (let l = 0; l < L; l++) {
    const pre = `encoder.layer.${l}.`;
    const proj = (name) => x.map((xi) => linear(xi, p(`${pre}attention.self.${name}.weight`), d, p(`${pre}attention.self.${name}.bias`)));
    const { weights, ctx } = attend(proj('query'), proj('key'), proj('value'), H, H, hd, false);
    attention.push(weights);
    x = x.map((xi, i) => {
      const a = linear(ctx[i], p(`${pre}attention.output.dense.weight`), d, p(`${pre}attention.output.dense.bias`));
      const h = layerNorm(xi.map((u, j) => u + a[j]), p(`${pre}attention.output.LayerNorm.weight`), p(`${pre}attention.output.LayerNorm.bias`), eps);
      const m = linear(h, p(`${pre}intermediate.dense.weight`), ffn, p(`${pre}intermediate.dense.bias`)).map(geluErf);
      const o = linear(m, p(`${pre}output.dense.weight`), d, p(`${pre}output.dense.bias`));
      return layerNorm(h.map((u, j) => u + o[j]), p(`${pre}output.LayerNorm.weight`), p(`${pre}output.LayerNorm.bias`), eps);
    });
  }
  let logits = null;
  if (t.has('cls.predictions.bias')) {
    logits = new Float64Array(ids.length * V);
    x.forEach((xi, i) => {
      const tr = linear(xi, get(t, 'cls.predictions.transform.dense.weight'), d, get(t, 'cls.predictions.transform.dense.bias')).map(geluErf);
      const n = layerNorm(tr, get(t, 'cls.predictions.transform.LayerNorm.weight', 'cls.predictions.transform.LayerNorm.gamma'),
        get(t, 'cls.predictions.transform.LayerNorm.bias', 'cls.predictions.transform.LayerNorm.beta'), eps);
      logits.set(linear(n, word, V, get(t, 'cls.predictions.bias')), i * V);
    });
  }
  return { attention, logits, hidden: concat(x) };
}

function llama(config, t, ids) {
  const d = config.hidden_size, H = config.num_attention_heads, KV = config.num_key_value_heads ?? H;
  const hd = config.head_dim ?? d / H, L = config.num_hidden_layers, V = config.vocab_size, ffn = config.intermediate_size;
  const eps = config.rms_norm_eps ?? 1e-6, theta = config.rope_theta ?? 10000;
  const p = (n) => get(t, `model.${n}`);
  const opt = (n) => (t.has(`model.${n}`) ? t.get(`model.${n}`).values : null);
  // rotate_half: pairs (i, i + hd/2) turn by pos·θ^(−2i/hd).
  const rope = (vec, heads, pos) => {
    const out = Float64Array.from(vec);
    for (let h = 0; h < heads; h++)
      for (let i = 0; i < hd / 2; i++) {
        const angle = pos * theta ** (-2 * i / hd), c = Math.cos(angle), s = Math.sin(angle);
        const a = vec[h * hd + i], b = vec[h * hd + i + hd / 2];
        out[h * hd + i] = a * c - b * s;
        out[h * hd + i + hd / 2] = b * c + a * s;
      }
    return out;
  };
  let x = ids.map((id) => row(p('embed_tokens.weight'), id, d));
  const attention = [];
  for (let l = 0; l < L; l++) {
    const pre = `layers.${l}.`;
    const q = [], k = [], v = [];
    x.forEach((xi, i) => {
      const h = rmsNorm(xi, p(`${pre}input_layernorm.weight`), eps);
      q.push(rope(linear(h, p(`${pre}self_attn.q_proj.weight`), H * hd, opt(`${pre}self_attn.q_proj.bias`)), H, i));
      k.push(rope(linear(h, p(`${pre}self_attn.k_proj.weight`), KV * hd, opt(`${pre}self_attn.k_proj.bias`)), KV, i));
      v.push(linear(h, p(`${pre}self_attn.v_proj.weight`), KV * hd, opt(`${pre}self_attn.v_proj.bias`)));
    });
    const { weights, ctx } = attend(q, k, v, H, KV, hd, true);
    attention.push(weights);
    x = x.map((xi, i) => {
      const o = linear(ctx[i], p(`${pre}self_attn.o_proj.weight`), d, opt(`${pre}self_attn.o_proj.bias`));
      const a = xi.map((u, j) => u + o[j]);
      const h = rmsNorm(a, p(`${pre}post_attention_layernorm.weight`), eps);
      const g = linear(h, p(`${pre}mlp.gate_proj.weight`), ffn), u = linear(h, p(`${pre}mlp.up_proj.weight`), ffn);
      const f = linear(g.map((gv, j) => silu(gv) * u[j]), p(`${pre}mlp.down_proj.weight`), d);
      return a.map((w, j) => w + f[j]);
    });
  }
  x = x.map((xi) => rmsNorm(xi, p('norm.weight'), eps));
  const head = t.has('lm_head.weight') && config.tie_word_embeddings !== true ? get(t, 'lm_head.weight') : p('embed_tokens.weight');
  return { attention, logits: linear(x[x.length - 1], head, V), hidden: concat(x) };
}

function concat(rows) {
  const out = new Float64Array(rows.length * rows[0].length);
  rows.forEach((r, i) => out.set(r, i * r.length));
  return out;
}

// DistilBERT is BERT's block under other names (modeling_distilbert.py), without token types,
// LayerNorm eps 1e-12: read as BERT with a zero token-type embedding.
function distilbert(config, t, ids) {
  const renames = [[/^distilbert\./, 'bert.'], [/transformer\.layer\./, 'encoder.layer.'], [/attention\.q_lin/, 'attention.self.query'],
    [/attention\.k_lin/, 'attention.self.key'], [/attention\.v_lin/, 'attention.self.value'], [/attention\.out_lin/, 'attention.output.dense'],
    [/sa_layer_norm/, 'attention.output.LayerNorm'], [/ffn\.lin1/, 'intermediate.dense'], [/ffn\.lin2/, 'output.dense'],
    [/output_layer_norm/, 'output.LayerNorm'], [/^vocab_transform/, 'cls.predictions.transform.dense'],
    [/^vocab_layer_norm/, 'cls.predictions.transform.LayerNorm'], [/^vocab_projector\.bias/, 'cls.predictions.bias']];
  const bertTensors = new Map();
  for (const [name, tensor] of t) bertTensors.set(renames.reduce((n, [from, to]) => n.replace(from, to), name), tensor);
  bertTensors.set('bert.embeddings.token_type_embeddings.weight', { shape: [1, config.dim], values: new Float64Array(config.dim) });
  return bert({ hidden_size: config.dim, num_attention_heads: config.n_heads, num_hidden_layers: config.n_layers,
    vocab_size: config.vocab_size, layer_norm_eps: 1e-12, intermediate_size: config.hidden_dim }, bertTensors, ids, null);
}

export function reference(config, tensors, ids, typeIds) {
  const list = Array.from(ids);
  if (config.model_type === 'gpt2') return gpt2(config, tensors, list);
  if (config.model_type === 'bert') return bert(config, tensors, list, typeIds);
  if (config.model_type === 'distilbert') return distilbert(config, tensors, list);
  return llama(config, tensors, list);
}

/** Largest |a − b| over two equal-length arrays. */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
