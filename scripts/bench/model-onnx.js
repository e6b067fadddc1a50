// The bench's random models (model-files.js) as ONNX graphs for onnxruntime-web, built in
// JavaScript with onnx-proto (no PyTorch): input `ids` int64 [n] (batch 1, any n up to the
// context), outputs `logits` [1, vocab] of the last position and `attention_l` [heads, n, n] of
// every layer, the same work as our lm.run(). Linear weights stay in the Hub's layout and are
// read by Gemm (transB for nn.Linear's [out, in], plain for GPT-2's Conv1D [in, out]), so the
// graph holds each value once (the tied LM head reads the embedding table itself).
import { FLOAT, model, node, onnx, tensorType } from './onnx-models.js';
import { tensorList, tensorValues } from './model-files.js';

const INT64 = onnx.TensorProto.DataType.INT64;

const floats = (name, dims, values) => ({ name, dataType: FLOAT, dims, rawData: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) });
const int64s = (name, values) => ({ name, dataType: INT64, dims: [values.length], int64Data: values });

// Causal mask [context, context] (0 on and below the diagonal, -1e9 above) and, for RoPE, the
// rotate-half cos/sin tables [context, headDim] of the Hub's Llama.
function tables(s) {
  const c = s.context, hd = s.dim / s.heads;
  const mask = new Float32Array(c * c);
  for (let i = 0; i < c; i++) for (let j = i + 1; j < c; j++) mask[i * c + j] = -1e9;
  const out = [floats('mask', [c, c], mask)];
  if (s.arch === 'llama') {
    const cos = new Float32Array(c * hd), sin = new Float32Array(c * hd);
    for (let p = 0; p < c; p++)
      for (let i = 0; i < hd / 2; i++) {
        const angle = p / s.ropeTheta ** ((2 * i) / hd);
        cos[p * hd + i] = cos[p * hd + i + hd / 2] = Math.cos(angle);
        sin[p * hd + i] = sin[p * hd + i + hd / 2] = Math.sin(angle);
      }
    out.push(floats('cos', [c, hd], cos), floats('sin', [c, hd], sin));
  }
  return out;
}

/** ONNX bytes of a shape's random model (float32 weights from `seed`). */
export function onnxBytes(s, seed) {
  const hd = s.dim / s.heads, group = s.heads / s.kvHeads, L = s.layers;
  const nodes = [];
  const n = (op, inputs, outputs, attrs) => nodes.push(node(op, inputs, outputs, attrs));
  const initializers = tensorList(s).map((t) => floats(t.name, t.shape, tensorValues(s, t, seed)));
  initializers.push(...tables(s),
    floats('scale', [], new Float32Array([1 / Math.sqrt(hd)])), floats('eps', [], new Float32Array([s.normEps])),
    int64s('zero', [0]), int64s('zeros2', [0, 0]), int64s('one', [1]), int64s('half', [hd / 2]), int64s('full', [hd]),
    int64s('rows', [-1, s.dim]), int64s('byHead', [0, s.heads, hd]), int64s('byKvHead', [0, s.kvHeads, hd]),
    int64s('grouped', [s.kvHeads, group, -1, hd]), int64s('headCount', [s.heads]), int64s('heads3', [s.heads, -1, hd]),
    int64s('split3', [s.dim, s.dim, s.dim]));
  // n, n - 1 and the [n, n] corner of the mask, from the input's shape.
  n('Shape', ['ids'], ['n']);
  n('Sub', ['n', 'one'], ['last']);
  n('Concat', ['n', 'n'], ['nn'], { axis: 0 });
  n('Concat', ['headCount', 'n', 'n'], ['attnShape'], { axis: 0 });
  n('Slice', ['mask', 'zeros2', 'nn'], ['maskN']);
  n('Gather', [s.arch === 'gpt2' ? 'wte.weight' : 'model.embed_tokens.weight', 'ids'], ['x0'], { axis: 0 });
  let x = 'x0';
  if (s.arch === 'gpt2') {
    n('Slice', ['wpe.weight', 'zero', 'n'], ['pos']);
    n('Add', ['x0', 'pos'], ['x0p']);
    x = 'x0p';
  } else {
    n('Slice', ['cos', 'zero', 'n'], ['cosN']);
    n('Slice', ['sin', 'zero', 'n'], ['sinN']);
  }
  const norm = (input, prefix, out) => {
    if (s.arch === 'gpt2') {
      n('LayerNormalization', [input, `${prefix}.weight`, `${prefix}.bias`], [out], { axis: -1, epsilon: s.normEps });
      return;
    }
    n('Mul', [input, input], [`${out}_sq`]);
    n('ReduceMean', [`${out}_sq`], [`${out}_ms`], { axes: [-1], keepdims: 1 });
    n('Add', [`${out}_ms`, 'eps'], [`${out}_mse`]);
    n('Sqrt', [`${out}_mse`], [`${out}_rms`]);
    n('Div', [input, `${out}_rms`], [`${out}_n`]);
    n('Mul', [`${out}_n`, `${prefix}.weight`], [out]);
  };
  // nn.Linear ([out, in]) or Conv1D ([in, out], with bias).
  const linear = (input, w, out) => {
    if (s.arch === 'gpt2') n('Gemm', [input, `${w}.weight`, `${w}.bias`], [out]);
    else n('Gemm', [input, `${w}.weight`], [out], { transB: 1 });
  };
  const rope = (input, out) => {  // [heads, n, hd] · rotate-half
    n('Slice', [input, 'zero', 'half', 'minusOne'], [`${out}_a`]);
    n('Slice', [input, 'half', 'full', 'minusOne'], [`${out}_b`]);
    n('Neg', [`${out}_b`], [`${out}_nb`]);
    n('Concat', [`${out}_nb`, `${out}_a`], [`${out}_r`], { axis: -1 });
    n('Mul', [input, 'cosN'], [`${out}_c`]);
    n('Mul', [`${out}_r`, 'sinN'], [`${out}_s`]);
    n('Add', [`${out}_c`, `${out}_s`], [out]);
  };
  initializers.push(int64s('minusOne', [-1]));
  const outputs = [{ name: 'logits', type: tensorType([1, s.vocab]) }];
  for (let l = 0; l < L; l++) {
    const p = s.arch === 'gpt2' ? `h.${l}.` : `model.layers.${l}.`;
    const t = (name) => `l${l}_${name}`;
    let q, k, v;
    if (s.arch === 'gpt2') {
      norm(x, `${p}ln_1`, t('h'));
      linear(t('h'), `${p}attn.c_attn`, t('qkv'));
      n('Split', [t('qkv'), 'split3'], [t('q2'), t('k2'), t('v2')], { axis: 1 });
      [q, k, v] = [t('q2'), t('k2'), t('v2')];
    } else {
      norm(x, `${p}input_layernorm`, t('h'));
      linear(t('h'), `${p}self_attn.q_proj`, t('q2'));
      linear(t('h'), `${p}self_attn.k_proj`, t('k2'));
      linear(t('h'), `${p}self_attn.v_proj`, t('v2'));
      [q, k, v] = [t('q2'), t('k2'), t('v2')];
    }
    // [n, heads·hd] → [heads, n, hd]; Llama: RoPE, then q as [kv, group, n, hd] against k, v as
    // [kv, 1, n, hd] (MatMul broadcasts: query head h reads kv head ⌊h / group⌋, as repeat_kv).
    n('Reshape', [q, 'byHead'], [t('q3')]);
    n('Transpose', [t('q3')], [t('q')], { perm: [1, 0, 2] });
    n('Reshape', [k, 'byKvHead'], [t('k3')]);
    n('Transpose', [t('k3')], [t('k')], { perm: [1, 0, 2] });
    n('Reshape', [v, 'byKvHead'], [t('v3')]);
    n('Transpose', [t('v3')], [t('v')], { perm: [1, 0, 2] });
    let [qh, kh] = [t('q'), t('k')];
    if (s.arch === 'llama') {
      rope(t('q'), t('qr'));
      rope(t('k'), t('kr'));
      [qh, kh] = [t('qr'), t('kr')];
    }
    n('Reshape', [qh, 'grouped'], [t('qg')]);
    n('Unsqueeze', [kh, 'one'], [t('kg')]);
    n('Unsqueeze', [t('v'), 'one'], [t('vg')]);
    n('Transpose', [t('kg')], [t('kgt')], { perm: [0, 1, 3, 2] });
    n('MatMul', [t('qg'), t('kgt')], [t('s')]);
    n('Mul', [t('s'), 'scale'], [t('ss')]);
    n('Add', [t('ss'), 'maskN'], [t('sm')]);
    n('Softmax', [t('sm')], [t('p')], { axis: -1 });
    n('Reshape', [t('p'), 'attnShape'], [`attention_${l}`]);
    outputs.push({ name: `attention_${l}`, type: tensorType([s.heads, 'n', 'n']) });
    n('MatMul', [t('p'), t('vg')], [t('og')]);
    n('Reshape', [t('og'), 'heads3'], [t('o3')]);
    n('Transpose', [t('o3')], [t('o')], { perm: [1, 0, 2] });
    n('Reshape', [t('o'), 'rows'], [t('o2')]);
    linear(t('o2'), s.arch === 'gpt2' ? `${p}attn.c_proj` : `${p}self_attn.o_proj`, t('ao'));
    n('Add', [x, t('ao')], [t('x1')]);
    if (s.arch === 'gpt2') {
      norm(t('x1'), `${p}ln_2`, t('h2'));
      linear(t('h2'), `${p}mlp.c_fc`, t('f'));
      // gelu_new: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
      initializers.push(...(l === 0 ? [floats('c0', [], new Float32Array([0.044715])), floats('c1', [], new Float32Array([Math.sqrt(2 / Math.PI)])),
        floats('c2', [], new Float32Array([0.5])), floats('c3', [], new Float32Array([1]))] : []));
      n('Mul', [t('f'), t('f')], [t('f2')]);
      n('Mul', [t('f2'), t('f')], [t('f3')]);
      n('Mul', [t('f3'), 'c0'], [t('f3c')]);
      n('Add', [t('f'), t('f3c')], [t('fi')]);
      n('Mul', [t('fi'), 'c1'], [t('fs')]);
      n('Tanh', [t('fs')], [t('ft')]);
      n('Add', [t('ft'), 'c3'], [t('f1')]);
      n('Mul', [t('f'), t('f1')], [t('fx')]);
      n('Mul', [t('fx'), 'c2'], [t('g')]);
      linear(t('g'), `${p}mlp.c_proj`, t('m'));
    } else {
      norm(t('x1'), `${p}post_attention_layernorm`, t('h2'));
      linear(t('h2'), `${p}mlp.gate_proj`, t('gate'));
      linear(t('h2'), `${p}mlp.up_proj`, t('up'));
      n('Sigmoid', [t('gate')], [t('sg')]);
      n('Mul', [t('gate'), t('sg')], [t('silu')]);
      n('Mul', [t('silu'), t('up')], [t('g')]);
      linear(t('g'), `${p}mlp.down_proj`, t('m'));
    }
    n('Add', [t('x1'), t('m')], [t('x2')]);
    x = t('x2');
  }
  n('Gather', [x, 'last'], ['xLast'], { axis: 0 });
  norm('xLast', s.arch === 'gpt2' ? 'ln_f' : 'model.norm', 'xf');
  const head = s.arch === 'gpt2' ? 'wte.weight' : s.tied ? 'model.embed_tokens.weight' : 'lm_head.weight';
  n('Gemm', ['xf', head], ['logits'], { transB: 1 });
  return model({
    name: s.name, opsets: { '': 17 }, nodes, initializers,
    inputs: [{ name: 'ids', type: { tensorType: { elemType: INT64, shape: { dim: [{ dimParam: 'n' }] } } } }],
    outputs,
  });
}
