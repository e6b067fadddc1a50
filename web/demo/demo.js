// Minimal demo: a sentence's self-attention heatmap from lens.attention on seeded random vectors.
import { init } from '../attnlens.js';

const D = 16;

// Deterministic pseudo-random vector per word, so a word always gets the same vector.
function vectorFor(word, salt) {
  let h = 2166136261 ^ salt;
  for (const ch of word.toLowerCase()) h = Math.imul(h ^ ch.codePointAt(0), 16777619);
  const v = new Float32Array(D);
  for (let i = 0; i < D; i++) {
    h ^= h << 13; h ^= h >>> 17; h ^= h << 5;
    v[i] = ((h >>> 0) / 2 ** 32) * 2 - 1;
  }
  return v;
}

function tokensOf(text) {
  return text.match(/[\p{L}\p{N}']+|[^\s\p{L}\p{N}]/gu) ?? [];
}

function draw(canvas, tokens, weights) {
  const n = tokens.length, cell = Math.max(8, Math.min(36, Math.floor(560 / Math.max(n, 1))));
  const label = 90;
  canvas.width = label + n * cell;
  canvas.height = label + n * cell;
  const ctx = canvas.getContext('2d');
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  ctx.fillStyle = dark ? '#14161a' : '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = dark ? '#e6e6e6' : '#1b1f24';
  ctx.font = '12px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  tokens.forEach((t, i) => {
    ctx.textAlign = 'right';
    ctx.fillText(t, label - 6, label + i * cell + cell / 2, label - 8);
    ctx.save();
    ctx.translate(label + i * cell + cell / 2, label - 6);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'left';
    ctx.fillText(t, 0, 0, label - 8);
    ctx.restore();
  });
  // Weight w → white-to-blue: red channel = 255·(1 − w), so the picture encodes the value.
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const w = weights[i * n + j];
      ctx.fillStyle = `rgb(${Math.round(255 * (1 - w))}, ${Math.round(255 - 165 * w)}, 255)`;
      ctx.fillRect(label + j * cell, label + i * cell, cell, cell);
    }
  canvas.setAttribute('aria-label', `Attention heatmap of ${n} tokens: row i shows where token i looks`);
  return { cell, label };
}

async function main() {
  const status = document.getElementById('status');
  const input = document.getElementById('sentence');
  const canvas = document.getElementById('heatmap');
  const lens = await init();
  const update = () => {
    const tokens = tokensOf(input.value);
    if (tokens.length === 0) {
      status.textContent = 'Type a sentence.';
      return;
    }
    const n = tokens.length;
    const q = new Float32Array(n * D), k = new Float32Array(n * D), v = new Float32Array(n * D);
    tokens.forEach((t, i) => {
      q.set(vectorFor(t, 1), i * D);
      k.set(vectorFor(t, 2), i * D);
      v.set(vectorFor(t, 3), i * D);
    });
    const { weights } = lens.attention(q, k, v, { dK: D });
    const layout = draw(canvas, tokens, weights);
    // Exposed for tests and the curious: exactly what was drawn.
    canvas.attnlens = { tokens, q, k, v, dK: D, weights, layout, simd: lens.simd, arch: lens.arch };
    status.textContent = `${n} tokens · engine: ${lens.simd ? 'WebAssembly SIMD128' : 'scalar WebAssembly'}`;
    canvas.dispatchEvent(new Event('drawn'));
  };
  input.addEventListener('input', update);
  update();
}

main().catch((error) => {
  document.getElementById('status').textContent = `Could not start: ${error.message}`;
  throw error;
});
