// The files `npm run bench:models` writes (scripts/bench/model-files.js, model-gguf.js,
// model-onnx.js), checked independently of every engine: safetensors and GGUF parsed back here
// and compared with the generator's values (rounded as each dtype stores them, q/k rows in each
// format's order), and the ONNX graphs run by onnxruntime-web against a float64 forward pass
// written here from the architectures' definitions (GPT-2 and Llama), logits and every layer's
// attention.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { f16Bits, promptIds, roundTo, safetensorsBytes, tensorList, tensorValues } from '../../scripts/bench/model-files.js';
import { ggufBytes } from '../../scripts/bench/model-gguf.js';
import { onnxBytes } from '../../scripts/bench/model-onnx.js';
import { shapeOf } from '../../scripts/bench/model-shapes.js';

const SEED = 3;

function readSafetensors(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  return { header, data: 8 + n, view };
}

function decode16(bits, dtype) {
  if (dtype === 'BF16') return new Float32Array(new Uint32Array([bits << 16]).buffer)[0];
  const e = (bits >> 10) & 31, m = bits & 1023;
  const v = e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15);
  return bits & 0x8000 ? -v : v;
}

// Float64 forward pass: { logits (last position), attention[l] [heads·n·n] }.
function reference(s, ids) {
  const W = {};
  for (const t of tensorList(s)) W[t.name] = { shape: t.shape, v: Float64Array.from(tensorValues(s, t, SEED)) };
  const n = ids.length, d = s.dim, H = s.heads, hd = d / H, group = H / s.kvHeads;
  const gpt2 = s.arch === 'gpt2';
  const linear = (x, name) => {  // Conv1D [in, out] + bias, or nn.Linear [out, in]
    const w = W[`${name}.weight`];
    const [rows, cols] = w.shape;
    const out = new Float64Array(gpt2 ? cols : rows);
    for (let j = 0; j < out.length; j++) {
      let sum = gpt2 ? W[`${name}.bias`].v[j] : 0;
      for (let i = 0; i < x.length; i++) sum += x[i] * (gpt2 ? w.v[i * cols + j] : w.v[j * cols + i]);
      out[j] = sum;
    }
    return out;
  };
  const norm = (x, name) => {
    const w = W[`${name}.weight`].v;
    if (gpt2) {
      const mean = x.reduce((a, b) => a + b, 0) / x.length;
      const variance = x.reduce((a, b) => a + (b - mean) ** 2, 0) / x.length;
      return x.map((v, i) => ((v - mean) / Math.sqrt(variance + s.normEps)) * w[i] + W[`${name}.bias`].v[i]);
    }
    const rms = Math.sqrt(x.reduce((a, b) => a + b * b, 0) / x.length + s.normEps);
    return x.map((v, i) => (v / rms) * w[i]);
  };
  const rope = (vec, p) => {  // rotate-half, per head
    const out = Float64Array.from(vec);
    for (let h = 0; h < vec.length / hd; h++)
      for (let i = 0; i < hd / 2; i++) {
        const angle = p / s.ropeTheta ** ((2 * i) / hd);
        const a = vec[h * hd + i], b = vec[h * hd + i + hd / 2];
        out[h * hd + i] = a * Math.cos(angle) - b * Math.sin(angle);
        out[h * hd + i + hd / 2] = b * Math.cos(angle) + a * Math.sin(angle);
      }
    return out;
  };
  const embedding = W[gpt2 ? 'wte.weight' : 'model.embed_tokens.weight'].v;
  let x = ids.map((id, p) => Float64Array.from({ length: d }, (_, i) => embedding[id * d + i] + (gpt2 ? W['wpe.weight'].v[p * d + i] : 0)));
  const attention = [];
  for (let l = 0; l < s.layers; l++) {
    const p = gpt2 ? `h.${l}.` : `model.layers.${l}.`;
    const q = [], k = [], v = [];
    x.forEach((row, pos) => {
      const h = norm(row, gpt2 ? `${p}ln_1` : `${p}input_layernorm`);
      if (gpt2) {
        const qkv = linear(h, `${p}attn.c_attn`);
        q.push(qkv.subarray(0, d)), k.push(qkv.subarray(d, 2 * d)), v.push(qkv.subarray(2 * d));
      } else {
        q.push(rope(linear(h, `${p}self_attn.q_proj`), pos));
        k.push(rope(linear(h, `${p}self_attn.k_proj`), pos));
        v.push(linear(h, `${p}self_attn.v_proj`));
      }
    });
    const a = new Float64Array(H * n * n);
    const mixed = x.map(() => new Float64Array(d));
    for (let h = 0; h < H; h++) {
      const kvh = Math.floor(h / group);
      for (let i = 0; i < n; i++) {
        const scores = [];
        for (let j = 0; j <= i; j++) {
          let dot = 0;
          for (let c = 0; c < hd; c++) dot += q[i][h * hd + c] * k[j][kvh * hd + c];
          scores.push(dot / Math.sqrt(hd));
        }
        const max = Math.max(...scores);
        const e = scores.map((z) => Math.exp(z - max));
        const sum = e.reduce((s1, z) => s1 + z, 0);
        e.forEach((z, j) => {
          a[(h * n + i) * n + j] = z / sum;
          for (let c = 0; c < hd; c++) mixed[i][h * hd + c] += (z / sum) * v[j][kvh * hd + c];
        });
      }
    }
    attention.push(a);
    x = x.map((row, i) => {
      const projected = linear(mixed[i], gpt2 ? `${p}attn.c_proj` : `${p}self_attn.o_proj`);
      const x1 = row.map((r, c) => r + projected[c]);
      const h2 = norm(x1, gpt2 ? `${p}ln_2` : `${p}post_attention_layernorm`);
      let inner;
      if (gpt2) inner = linear(h2, `${p}mlp.c_fc`).map((f) => 0.5 * f * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (f + 0.044715 * f ** 3))));
      else {
        const up = linear(h2, `${p}mlp.up_proj`);
        inner = linear(h2, `${p}mlp.gate_proj`).map((g, c) => (g / (1 + Math.exp(-g))) * up[c]);
      }
      const m = linear(inner, gpt2 ? `${p}mlp.c_proj` : `${p}mlp.down_proj`);
      return x1.map((r, c) => r + m[c]);
    });
  }
  const last = norm(x[n - 1], gpt2 ? 'ln_f' : 'model.norm');
  const head = W[gpt2 || s.tied ? (gpt2 ? 'wte.weight' : 'model.embed_tokens.weight') : 'lm_head.weight'].v;
  const logits = Float64Array.from({ length: s.vocab }, (_, r) => last.reduce((sum, xv, c) => sum + xv * head[r * d + c], 0));
  return { logits, attention };
}

describe('bench:models files', () => {
  it('safetensors: the Hub\'s names and shapes, values as F32/F16/BF16 store the generator\'s', () => {
    const s = shapeOf('tiny-llama');
    for (const dtype of ['F32', 'F16', 'BF16']) {
      const { header, data, view } = readSafetensors(safetensorsBytes(s, dtype, SEED));
      assert.equal(data % 8, 0);
      for (const t of tensorList(s)) {
        assert.deepEqual([header[t.name].dtype, header[t.name].shape], [dtype, t.shape], t.name);
        const values = tensorValues(s, t, SEED);
        const at = data + header[t.name].data_offsets[0];
        for (let i = 0; i < values.length; i += 97) {
          const got = dtype === 'F32' ? view.getFloat32(at + 4 * i, true) : decode16(view.getUint16(at + 2 * i, true), dtype);
          assert.equal(got, roundTo(values[i], dtype), `${t.name}[${i}] ${dtype}`);
        }
      }
    }
    assert.equal(tensorList(shapeOf('gpt2-small')).length, 2 + 12 * 12 + 2);
    // Half rounding: ties to even, subnormals, saturation.
    assert.deepEqual([1, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -24, 2 ** -25, 65520, -0].map(f16Bits),
      [0x3c00, 0x3c00, 0x3c02, 0x0001, 0x0000, 0x7c00, 0x8000]);
  });

  it("GGUF v3: header, metadata, tensors in llama.cpp's names, dims innermost first, q/k rows interleaved", () => {
    const s = shapeOf('tiny-llama');
    const bytes = ggufBytes(s, 'F16', SEED);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), 'GGUF');
    assert.equal(view.getUint32(4, true), 3);
    const tensors = Number(view.getBigUint64(8, true)), kvs = Number(view.getBigUint64(16, true));
    assert.equal(tensors, tensorList(s).length);
    let at = 24;
    const string = () => {
      const n = Number(view.getBigUint64(at, true));
      const text = new TextDecoder().decode(bytes.subarray(at + 8, at + 8 + n));
      at += 8 + n;
      return text;
    };
    const SIZE = { 4: 4, 5: 4, 6: 4, 7: 1 };
    const meta = {};
    const value = (type) => {
      if (type === 8) return string();
      const v = type === 4 ? view.getUint32(at, true) : type === 5 ? view.getInt32(at, true) : type === 6 ? view.getFloat32(at, true) : bytes[at];
      at += SIZE[type];
      return v;
    };
    for (let i = 0; i < kvs; i++) {
      const key = string();
      const type = view.getUint32(at, true);
      at += 4;
      if (type === 9) {
        const inner = view.getUint32(at, true), count = Number(view.getBigUint64(at + 4, true));
        at += 12;
        meta[key] = Array.from({ length: count }, () => value(inner));
      } else meta[key] = value(type);
    }
    assert.equal(meta['general.architecture'], 'llama');
    assert.equal(meta['llama.attention.head_count_kv'], s.kvHeads);
    assert.equal(meta['tokenizer.ggml.tokens'].length, s.vocab);
    assert.deepEqual(meta['tokenizer.ggml.tokens'].slice(0, 4), ['<unk>', '<s>', '</s>', '<0x00>']);
    const infos = {};
    for (let i = 0; i < tensors; i++) {
      const name = string();
      const dims = Array.from({ length: view.getUint32(at, true) }, (_, j) => Number(view.getBigUint64(at + 4 + 8 * j, true)));
      at += 4 + 8 * dims.length;
      infos[name] = { dims, type: view.getUint32(at, true), offset: Number(view.getBigUint64(at + 4, true)) };
      at += 12;
    }
    const dataStart = Math.ceil(at / 32) * 32;
    assert.deepEqual(infos['blk.0.attn_k.weight'].dims, [s.dim, (s.dim / s.heads) * s.kvHeads]);
    assert.equal(infos['blk.0.attn_norm.weight'].type, 0);  // F32 norms in an F16 file
    // Row 2i + c of each head in GGUF is row c·hd/2 + i of the Hub's (rotate-half) order.
    const hub = tensorValues(s, tensorList(s).find((t) => t.name === 'model.layers.1.self_attn.q_proj.weight'), SEED);
    const q = infos['blk.1.attn_q.weight'];
    assert.equal(q.type, 1);
    const hd = s.dim / s.heads;
    for (const [h, i, c] of [[0, 0, 0], [0, 0, 1], [1, 3, 1], [3, hd / 2 - 1, 0]]) {
      const ggufRow = h * hd + 2 * i + c, hubRow = h * hd + c * (hd / 2) + i;
      for (const col of [0, 5, s.dim - 1])
        assert.equal(decode16(view.getUint16(dataStart + q.offset + 2 * (ggufRow * s.dim + col), true), 'F16'),
          roundTo(hub[hubRow * s.dim + col], 'F16'));
    }
  });

  for (const name of ['tiny-gpt2', 'tiny-llama'])
    it(`${name} ONNX graph under onnxruntime-web = a float64 forward pass (logits, every layer's attention)`, async () => {
      const ort = await import('onnxruntime-web');
      ort.env.wasm.numThreads = 1;
      const s = shapeOf(name);
      const session = await ort.InferenceSession.create(onnxBytes(s, SEED), { logSeverityLevel: 3 });
      const ids = promptIds(s, 12, 5);
      const out = await session.run({ ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [ids.length]) });
      const ref = reference(s, ids);
      const scale = Math.max(...ref.logits.map(Math.abs));
      let logits = 0;
      ref.logits.forEach((x, i) => { logits = Math.max(logits, Math.abs(x - out.logits.data[i])); });
      assert.ok(logits <= 1e-4 * scale, `logits differ by ${logits} (scale ${scale})`);
      for (let l = 0; l < s.layers; l++) {
        const got = out[`attention_${l}`];
        assert.deepEqual(got.dims, [s.heads, ids.length, ids.length]);
        let diff = 0;
        ref.attention[l].forEach((x, i) => { diff = Math.max(diff, Math.abs(x - got.data[i])); });
        assert.ok(diff <= 1e-5, `layer ${l} attention differs by ${diff}`);
      }
    });
});
