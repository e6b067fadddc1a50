// The model modules' heap grows to 4 GiB (-sMAXIMUM_MEMORY=4GB): addresses above 2 GiB, which a
// wasm i32 hands to JS as negative numbers, are read unsigned by the shared heap helpers
// (web/engine/heap.js, web/model/loading.js) and by the C++ side, in the single-thread and the
// threaded model module; the working-memory check follows the module's own limit.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { CallBuffers, heapLimit } from '../../web/engine/heap.js';
import { instantiate } from '../../web/engine/load.js';
import { copyLayers, instantiateModel, moduleVariant, readTokens } from '../../web/model/loading.js';

const MiB = 2 ** 20, GiB = 2 ** 30;

// The model module this runtime runs (relaxed SIMD with V8's flag, else SIMD128), without and
// with threads (Node runs threads: the loader's choice is the threaded module).
const variant = moduleVariant();
const modules = {
  [variant]: await instantiate(variant),
  [`${variant}-threads`]: await instantiateModel(variant),
};
after(() => { for (const m of Object.values(modules)) m.setThreads?.(1); });

describe('a model module heap above 2 GiB', () => {
  it('the loader picks the threaded model module in Node, the engine modules keep 2 GiB', async () => {
    const threaded = modules[`${variant}-threads`];
    assert.ok(threaded.threads() > 1, `threads() = ${threaded.threads()}`);
    assert.equal(modules[variant].threads, undefined, 'the single-thread module has no thread pool');
    assert.equal(heapLimit(await instantiate('simd')), 2 * GiB);
  });

  for (const [name, module] of Object.entries(modules)) {
    it(`${name}: buffers past 2 GiB are written, read and seen by C++ at the right place`, () => {
      assert.equal(module.heapLimit(), 4 * GiB);
      assert.equal(heapLimit(module), 4 * GiB);
      // Three 768 MiB blocks (never touched, so never committed) push what follows past 2 GiB.
      const padding = [0, 1, 2].map(() => new CallBuffers(module, { pad: 768 * MiB }, 'padding'));
      const floats = 4 * MiB;
      const high = new CallBuffers(module, { x: floats * 4, ids: 16, offsets: 16, text: 8 }, 'the test');
      try {
        assert.ok(high.base > 2 ** 31, `base ${high.base} is past 2 GiB`);
        assert.ok(module.HEAPU8.length > 2 ** 31 + floats * 4, 'the heap grew past 2 GiB');
        const pattern = new Float32Array(floats);
        for (let i = 0; i < floats; i++) pattern[i] = (i % 1000) - 499.5;
        high.write('x', pattern);
        assert.deepEqual(high.readFloats('x', floats), pattern);
        const into = new Float32Array(1000);
        assert.deepEqual(high.readInto('x', into), pattern.subarray(0, 1000));
        // copyLayers reads a layer the C++ side hands over as an address.
        const [layer] = copyLayers(module, () => high.address.x, 1, 2, 3);
        assert.deepEqual(layer.attention, pattern.subarray(0, 18));
        // C++ reads the same address from JS: the first non-finite float it finds is ours.
        assert.equal(module.firstNonFinite(high.address.x, floats), -1);
        module.HEAPF32[(high.address.x + 4 * 3_000_001) / 4] = NaN;
        assert.equal(module.firstNonFinite(high.address.x, floats), 3_000_001);
        // Tokens: ids, offsets and text all above 2 GiB.
        module.HEAP32.set([7, -3], high.address.ids / 4);
        module.HEAPU32.set([0, 2, 5], high.address.offsets / 4);
        module.HEAPU8.set(new TextEncoder().encode('hi you'), high.address.text);
        assert.deepEqual(readTokens(module, high.address, 2), { ids: Int32Array.from([7, -3]), tokens: ['hi', ' yo'] });
        // Past the module's limit: refused before allocating, with the numbers.
        assert.throws(() => new CallBuffers(module, { x: 2 * GiB }, 'a huge call'),
          { name: 'RangeError', message: /^a huge call needs 2\.0 GiB of working memory, more than the 1\.\d GiB left of the 4\.0 GiB/ });
      } finally {
        high.free();
        for (const p of padding) p.free();
      }
    });
  }
});
