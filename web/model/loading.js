// What every model loader shares: checked options with a progress reporter that never throws,
// and a per-source cache of pending loads (a failed load is forgotten, so it may be retried).
import { instantiate, relaxedSimdSupported } from '../engine/load.js';
import { threadsSupported } from '../engine/threads.js';
import * as check from '../engine/validate.js';

/** `options` checked against `allowed`, plus `report(stage, loaded, total)` for onProgress. */
export function loadOptions(options, allowed) {
  const o = check.options('options', options, allowed);
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function')
    throw new TypeError(`options.onProgress must be a function (got ${check.describe(o.onProgress)})`);
  // fraction: the whole load, 0…1, never decreasing (bytes count for 95 %, until 'ready').
  let fraction = 0;
  const report = (stage, loaded, total) => {
    const part = stage === 'ready' ? 1 : stage === 'download' && total > 0 ? 0.95 * Math.min(1, loaded / total) : stage === 'download' ? 0 : 0.95;
    fraction = Math.max(fraction, part);
    try {
      o.onProgress?.({ stage, loaded, total, fraction });
    } catch (e) {
      console.warn('attnlens: onProgress threw', e);
    }
  };
  return { o, report };
}

// The model module for the engine's build, chosen as init() chooses: relaxed SIMD (fused
// multiply-add, same reference tolerances: tests/js/model.test.js and lm-reference.test.js run
// on both) where the engine runs it, else SIMD128 (the model module has no scalar build).
// Without an engine (a direct import), whatever this runtime validates.
export function moduleVariant(build) {
  if (build === 'relaxed' || (build === undefined && relaxedSimdSupported())) return 'model-relaxed';
  return 'model';
}

/**
 * The model module `variant` ('model' or 'model-relaxed'), threaded as the engine is: its
 * -pthread build with the engine's thread count (a Lens without threads: one thread, the
 * single-thread build), or without an engine the default count, wherever the runtime runs
 * threads (Node, cross-origin-isolated pages). A threaded build that does not start (a CSP that
 * refuses workers) gives the single-thread one, with a warning. The module's `threads()` says
 * how many threads its products use (1 on a single-thread build).
 */
export async function instantiateModel(variant, engine) {
  const wanted = engine === undefined ? 0 : (engine.threads ?? 1);
  if (wanted !== 1 && threadsSupported()) {
    const threaded = await import('../engine/threaded.js');
    const count = wanted || (await threaded.defaultThreads());
    if (count > 1) {
      const { args, failed, stop } = await threaded.threadedModuleArgs(count);
      try {
        const module = threaded.withFreshViews(
          await Promise.race([instantiate(`${variant}-threads`, args), failed]));
        module.setThreads(count);
        return module;
      } catch (error) {
        stop();
        console.warn(`attnlens: the threaded model module did not start (${error?.message ?? error}); using one thread`);
      }
    }
  }
  const module = await instantiate(variant);
  module.threads ??= () => 1;
  return module;
}

/** The cached load for `key` (null: not cached), else `start()`'s promise, cached. */
export function cachedLoad(cache, key, report, start) {
  if (key !== null && cache.has(key)) {
    const cached = cache.get(key);
    cached.then(() => report('ready', 1, 1), () => {});
    return cached;
  }
  const pending = start();
  if (key !== null) {
    cache.set(key, pending);
    pending.catch(() => cache.delete(key));
  }
  return pending;
}

/** Every layer's attention [heads, n, n] copied off the heap: `addressOf(l)` gives layer l's bytes. */
export function copyLayers(module, addressOf, layers, heads, n) {
  const out = [];
  for (let l = 0; l < layers; l++) {
    const at = (addressOf(l) >>> 0) / 4;
    out.push({ heads, attention: module.HEAPF32.slice(at, at + heads * n * n) });
  }
  return out;
}

// ignoreBOM: a token or text that starts with U+FEFF keeps it (it is content here, not a BOM).
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * A call's tokens read back from the wasm heap: `count` int32 ids at `ids`, and the UTF-8 text of
 * each token, the concatenation at `text` cut by `count + 1` uint32 `offsets`.
 */
export function readTokens(module, { ids, text, offsets }, count) {
  const at = (offsets >>> 0) / 4, textAt = text >>> 0, idsAt = (ids >>> 0) / 4;
  const starts = module.HEAPU32.slice(at, at + count + 1);
  // Copied out first: a threaded module's heap is shared memory, which TextDecoder refuses in
  // browsers.
  const bytes = module.HEAPU8.slice(textAt, textAt + (count ? starts[count] : 0));
  const tokens = new Array(count);
  for (let i = 0; i < count; i++) tokens[i] = utf8.decode(bytes.subarray(starts[i], starts[i + 1]));
  return { ids: module.HEAP32.slice(idsAt, idsAt + count), tokens };
}
