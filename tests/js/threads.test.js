// The threaded engine build in Node: chosen by default, sized by init({ threads }), results
// bit-identical to the single-thread build of the same SIMD flavour (on shapes large enough to
// be split across threads), options checked, and a plain script that used it still exits.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { describe, it } from 'node:test';

import { init, threadsSupported } from 'attnlens';
import * as ref from './reference.js';

// How long a child process may run before it counts as hung (a guard, not a speed limit).
const HANG_GUARD_MS = 300_000;
const cores = Math.min(8, os.availableParallelism?.() ?? os.cpus().length);
const single = await init({ build: 'simd', threads: false });
const two = await init({ build: 'simd', threads: 2 });
const same = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength),
  Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;

describe('threads', () => {
  it('Node runs the threaded build by default, with one thread per core (at most 8)', async () => {
    assert.equal(threadsSupported(), true);
    const lens = await init();
    assert.equal(lens.threads, cores);
    assert.equal(lens.threaded, cores > 1);
    assert.equal(lens, await init({ threads: true }));
    assert.equal(await init({ build: 'simd', threads: cores }), await init({ build: 'simd' }));
    assert.equal(two.threads, 2);
    assert.equal(two.threaded, true);
    assert.equal(two.build, 'simd');
    assert.equal(two.arch, 'wasm');
    assert.equal(single.threads, 1);
    assert.equal(single.threaded, false);
    assert.equal((await init({ build: 'simd', threads: 1 })), single, 'one thread is the single-thread build');
    assert.equal((await init({ simd: false })).threaded, false, 'the scalar build has no threaded twin');
  });

  it('lens.loadModel runs the model on the engine\'s threads, bit-identical to one thread', async () => {
    const [one, both] = [await single.loadModel('stories260K'), await two.loadModel('stories260K')];
    assert.equal(one.info.threads, 1);
    assert.equal(both.info.threads, 2, 'a threaded engine loads a threaded model module');
    const text = 'Once upon a time, there was a little dog named Max. He liked to play in the park with his ball.';
    const [a, b] = [one.run(text), both.run(text)];
    assert.ok(same(a.logits, b.logits), 'logits');
    a.layers.forEach((layer, l) => assert.ok(same(layer.attention, b.layers[l].attention), `layer ${l}`));
    const [ga, gb] = [one.generate('Lily', { steps: 24, temperature: 0 }), both.generate('Lily', { steps: 24, temperature: 0 })];
    assert.deepEqual(Array.from(gb.ids), Array.from(ga.ids));
    assert.equal(gb.text, ga.text);
  });

  it('checks options.threads', () => {
    for (const bad of ['2', null, {}, 2n])
      assert.throws(() => init({ threads: bad }), { name: 'TypeError', message: /options\.threads must be a boolean or a number/ });
    for (const bad of [0, -1, 1.5, NaN, Infinity, 17])
      assert.throws(() => init({ threads: bad }), { name: 'RangeError', message: /options\.threads must be an integer from 1 to 16/ });
  });

  const shapes = [
    { heads: 8, nQ: 256, nK: 256, dK: 64, dV: 64 },
    { heads: 8, nQ: 512, nK: 512, dK: 64, dV: 64, causal: true, weights: false },
    { heads: 3, nQ: 401, nK: 390, dK: 64, dV: 40, mask: true, returnScores: true },
    { heads: 1, nQ: 1000, nK: 700, dK: 32, dV: 64, weights: false },
    { heads: 5, nQ: 300, nK: 350, dK: 64, dV: 48, output: false },
  ];
  for (const s of shapes) {
    it(`attention is bit-identical to one thread: ${JSON.stringify(s)}`, () => {
      const q = ref.uniform(s.heads * s.nQ * s.dK, 1), k = ref.uniform(s.heads * s.nK * s.dK, 2);
      const v = ref.uniform(s.heads * s.nK * s.dV, 3);
      const keyMask = s.mask ? Uint8Array.from({ length: s.nK }, (_, j) => (j % 5 === 2 ? 0 : 1)) : undefined;
      const opts = { dK: s.dK, dV: s.dV, heads: s.heads, causal: s.causal, keyMask, returnScores: s.returnScores,
        weights: s.weights, output: s.output };
      const a = two.attention(q, k, s.output === false ? null : v, opts);
      const b = single.attention(q, k, s.output === false ? null : v, opts);
      assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort());
      for (const key of Object.keys(a)) assert.ok(same(a[key], b[key]), `${key} differs`);
      // And right: one head's weights against the float64 reference (an independent check).
      if (a.weights) {
        const h = s.heads - 1, n = s.nQ * s.nK;
        const w = ref.attention(q.subarray(h * s.nQ * s.dK, (h + 1) * s.nQ * s.dK),
          k.subarray(h * s.nK * s.dK, (h + 1) * s.nK * s.dK), v.subarray(h * s.nK * s.dV, (h + 1) * s.nK * s.dV),
          { dK: s.dK, dV: s.dV, causal: s.causal, keyMask }).weights;
        assert.ok(ref.maxAbsDiff(a.weights.subarray(h * n, (h + 1) * n), w) < 1e-5);
      }
    });
  }

  it('those shapes really are split across threads, and small calls are not', async () => {
    // The engine's own count of chunks (module.lastCallChunks), through a Lens on a module of our own.
    const { Lens } = await import('attnlens');
    const { instantiate } = await import('../../web/engine/load.js');
    const { threadedModuleArgs, withFreshViews } = await import('../../web/engine/threaded.js');
    const module = withFreshViews(await instantiate('simd-threads', (await threadedModuleArgs(2)).args));
    module.setThreads(2);
    const lens = new Lens(module, true, 'simd', 2);
    for (const s of [...shapes, { heads: 1, nQ: 128, nK: 128, dK: 64, dV: 64, small: true }]) {
      const q = new Float32Array(s.heads * s.nQ * s.dK).fill(0.1), k = new Float32Array(s.heads * s.nK * s.dK).fill(0.2);
      const v = s.output === false ? null : new Float32Array(s.heads * s.nK * s.dV).fill(0.3);
      lens.attention(q, k, v, { dK: s.dK, dV: s.dV, heads: s.heads, causal: s.causal, weights: s.weights, output: s.output });
      if (s.small) assert.equal(module.lastCallChunks(), 1, 'a small call stays on the calling thread');
      else assert.ok(module.lastCallChunks() >= 4, `${JSON.stringify(s)}: ${module.lastCallChunks()} chunks`);
    }
  });

  it('multiHead is bit-identical to one thread', () => {
    const n = 400, dModel = 256, heads = 4;
    const x = ref.uniform(n * dModel, 4);
    const w = (seed) => ref.uniform(dModel * dModel, seed, -0.1, 0.1);
    const opts = { dModel, heads, wQ: w(5), wK: w(6), wV: w(7), wO: w(8), causal: true };
    const a = two.multiHead(x, opts), b = single.multiHead(x, opts);
    assert.ok(same(a.weights, b.weights) && same(a.output, b.output));
  });

  it('reads results the workers wrote after the heap grew', () => {
    // A call larger than any before makes the workers' scratch grow the shared memory.
    const s = { heads: 2, dK: 64 };
    const q = ref.uniform(2 * 1500 * 64, 9);
    const before = two.memory().heapSize;
    const a = two.attention(q, q, q, s), b = single.attention(q, q, q, s);
    assert.ok(two.memory().heapSize >= before);
    assert.ok(same(a.weights, b.weights) && same(a.output, b.output));
  });

  it('a plain script that used threads exits by itself', async () => {
    const entry = JSON.stringify(new URL('../../web/attnlens.js', import.meta.url).href);
    const script = `import(${entry}).then(async ({ init }) => { const lens = await init({ threads: 2 }); ` +
      'const q = new Float32Array(8 * 256 * 64).fill(0.5); lens.attention(q, q, q, { dK: 64, heads: 8 }); ' +
      'console.log(lens.threads, lens.threaded); });';
    // Waits for the child's exit; only a hang (workers that keep it alive) meets the guard, which
    // is generous so that a loaded machine never trips it.
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const guard = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS);
    const [code, signal] = await once(child, 'exit');
    clearTimeout(guard);
    assert.equal(signal, null, `the script did not exit by itself within ${HANG_GUARD_MS / 1000} s (killed)`);
    assert.equal(code, 0);
    assert.equal(stdout.trim(), '2 true');
  });
});
