// The model shapes of `npm run bench:models` (scripts/bench/models.mjs), one row each: the files
// the bench writes (model-files.js), the ONNX graph (model-onnx.js) and the GGUF (model-gguf.js)
// all read their sizes from here, so a new architecture or size is a new row.
//   arch 'llama': RMSNorm, RoPE (rotate-half in the Hub's layout), SwiGLU MLP, grouped KV heads.
//   arch 'gpt2':  LayerNorm with biases, learned positions, GELU (tanh) MLP, fused c_attn (Conv1D,
//                 [in, out] in the Hub's files), tied LM head.
export const SHAPES = {
  'gpt2-small': {
    arch: 'gpt2', layers: 12, heads: 12, kvHeads: 12, dim: 768, hidden: 3072, vocab: 50257, context: 1024,
    normEps: 1e-5, tied: true, note: "GPT-2 small's shape (124M parameters)",
  },
  'smollm-135m': {
    arch: 'llama', layers: 30, heads: 9, kvHeads: 3, dim: 576, hidden: 1536, vocab: 49152, context: 2048,
    normEps: 1e-5, ropeTheta: 10000, tied: true, note: "SmolLM-135M's shape",
  },
  'tinyllama-1.1b': {
    arch: 'llama', layers: 22, heads: 32, kvHeads: 4, dim: 2048, hidden: 5632, vocab: 32000, context: 2048,
    normEps: 1e-5, ropeTheta: 10000, tied: false, note: "TinyLlama-1.1B's shape (--big)",
  },
  // Tiny shapes for the smoke test (tests/js/bench-models-smoke.test.js) and development.
  'tiny-llama': {
    arch: 'llama', layers: 2, heads: 4, kvHeads: 2, dim: 64, hidden: 160, vocab: 512, context: 160,
    normEps: 1e-5, ropeTheta: 10000, tied: true, note: 'a tiny Llama (smoke test)',
  },
  'tiny-gpt2': {
    arch: 'gpt2', layers: 2, heads: 4, kvHeads: 4, dim: 64, hidden: 256, vocab: 512, context: 160,
    normEps: 1e-5, tied: true, note: 'a tiny GPT-2 (smoke test)',
  },
};

export function shapeOf(name) {
  const shape = SHAPES[name];
  if (!shape) throw new Error(`unknown model shape '${name}' (known: ${Object.keys(SHAPES).join(', ')})`);
  return { name, headDim: shape.dim / shape.heads, ...shape };
}

/** Parameters of a shape (every tensor the Hub's files hold, tied head counted once). */
export function parameterCount(s) {
  const kv = (s.dim / s.heads) * s.kvHeads;
  if (s.arch === 'gpt2')
    return s.vocab * s.dim + s.context * s.dim + 2 * s.dim +
      s.layers * (4 * s.dim + 3 * s.dim * s.dim + 3 * s.dim + s.dim * s.dim + s.dim + 2 * s.dim * s.hidden + s.hidden + s.dim);
  return s.vocab * s.dim * (s.tied ? 1 : 2) + s.dim +
    s.layers * (2 * s.dim + 2 * s.dim * s.dim + 2 * s.dim * kv + 3 * s.dim * s.hidden);
}

/**
 * Weight bytes read per generated token at `bytesPerWeight`: every matrix once (the embedding
 * row is one row, not the table; the tied LM head reads the whole table), norms in float32.
 */
export function weightBytesPerToken(s, bytesPerWeight) {
  const kv = (s.dim / s.heads) * s.kvHeads;
  const matrices = s.arch === 'gpt2'
    ? s.layers * (4 * s.dim * s.dim + 2 * s.dim * s.hidden) + s.vocab * s.dim
    : s.layers * (2 * s.dim * s.dim + 2 * s.dim * kv + 3 * s.dim * s.hidden) + s.vocab * s.dim;
  return matrices * bytesPerWeight;
}
