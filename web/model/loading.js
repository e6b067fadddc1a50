// What every model loader shares: checked options with a progress reporter that never throws,
// and a per-source cache of pending loads (a failed load is forgotten, so it may be retried).
import * as check from '../engine/validate.js';

/** `options` checked against `allowed`, plus `report(stage, loaded, total)` for onProgress. */
export function loadOptions(options, allowed) {
  const o = check.options('options', options, allowed);
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function')
    throw new TypeError(`options.onProgress must be a function (got ${check.describe(o.onProgress)})`);
  const report = (stage, loaded, total) => {
    try {
      o.onProgress?.({ stage, loaded, total });
    } catch (e) {
      console.warn('attnlens: onProgress threw', e);
    }
  };
  return { o, report };
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
