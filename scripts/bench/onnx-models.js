// ONNX graphs for the onnxruntime-web peer, built in JavaScript with onnx-proto (no Python, no
// files on disk). Node only (onnx-proto is CommonJS); the browser benchmark gets the bytes from
// Node. Every graph computes softmax(scale·QKᵀ)·V per head, float32, with symbolic sequence
// lengths so one model serves every n.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const { onnx } = require('onnx-proto');

export const FLOAT = onnx.TensorProto.DataType.FLOAT;

export function tensorType(dims) {
  return {
    tensorType: {
      elemType: FLOAT,
      shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
    },
  };
}
export const value = (name, dims) => ({ name, type: tensorType(dims) });

function attr(name, v) {
  if (typeof v === 'string') return { name, type: onnx.AttributeProto.AttributeType.STRING, s: new TextEncoder().encode(v) };
  if (Array.isArray(v)) return { name, type: onnx.AttributeProto.AttributeType.INTS, ints: v };
  if (Number.isInteger(v) && !name.includes('scale'))
    return { name, type: onnx.AttributeProto.AttributeType.INT, i: v };
  return { name, type: onnx.AttributeProto.AttributeType.FLOAT, f: v };
}

export function node(opType, inputs, outputs, attributes = {}, domain = '') {
  return {
    opType, input: inputs, output: outputs, domain, name: `${opType}_${outputs[0]}`,
    attribute: Object.entries(attributes).map(([k, v]) => attr(k, v)),
  };
}

export function model({ nodes, inputs, outputs, initializers = [], opsets, name = 'attention' }) {
  const m = onnx.ModelProto.create({
    irVersion: 10,
    producerName: 'attnlens-bench',
    opsetImport: Object.entries(opsets).map(([domain, version]) => ({ domain, version })),
    graph: { name, node: nodes, input: inputs, output: outputs, initializer: initializers },
  });
  return onnx.ModelProto.encode(m).finish();
}

/**
 * The three graphs, for `heads` heads of width `d` (scale 1/√d). Layouts (batch 1):
 *   plain:  Q, K, V [h, n, d] → O [h, n, d]: MatMul(Q, Transpose(K)) → Mul(scale) → Softmax → MatMul(·, V)
 *   mha:    com.microsoft MultiHeadAttention: query [1, n, h·d], key/value [1, h, n, d] (BNSH)
 *           → O [1, n, h·d]
 *   attention23: opset-23 Attention, Q, K, V [1, h, n, d] → O [1, h, n, d]
 */
export function buildModels(heads, d) {
  const scale = 1 / Math.sqrt(d);
  const plain = model({
    opsets: { '': 17 },
    nodes: [
      node('Transpose', ['K'], ['Kt'], { perm: [0, 2, 1] }),
      node('MatMul', ['Q', 'Kt'], ['S']),
      node('Mul', ['S', 'scale'], ['Ss']),
      node('Softmax', ['Ss'], ['P'], { axis: -1 }),
      node('MatMul', ['P', 'V'], ['O']),
    ],
    initializers: [{ name: 'scale', dataType: FLOAT, dims: [], floatData: [scale] }],
    inputs: [value('Q', [heads, 'n', d]), value('K', [heads, 'n', d]), value('V', [heads, 'n', d])],
    outputs: [value('O', [heads, 'n', d])],
  });
  const mha = model({
    opsets: { '': 17, 'com.microsoft': 1 },
    nodes: [node('MultiHeadAttention', ['Q', 'K', 'V'], ['O'], { num_heads: heads, scale }, 'com.microsoft')],
    inputs: [value('Q', [1, 'n', heads * d]), value('K', [1, heads, 'n', d]), value('V', [1, heads, 'n', d])],
    outputs: [value('O', [1, 'n', heads * d])],
  });
  const attention23 = model({
    opsets: { '': 23 },
    nodes: [node('Attention', ['Q', 'K', 'V'], ['O'], { scale })],
    inputs: [value('Q', [1, heads, 'n', d]), value('K', [1, heads, 'n', d]), value('V', [1, heads, 'n', d])],
    outputs: [value('O', [1, heads, 'n', d])],
  });
  return { plain, mha, attention23 };
}
