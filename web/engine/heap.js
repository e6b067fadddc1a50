// One call's buffers on the wasm heap: a single allocation carved into 16-byte aligned slots.
// Views onto the heap are fetched after the allocation, since growing memory detaches old ones.
// Addresses are unsigned: a model module's heap may pass 2 GiB, where a wasm i32 read as a JS
// number is negative, so every address that comes straight from wasm (_malloc) is read `>>> 0`
// and indexes views as `address / 4`, never `address >> 2`.

/** The most any module's heap may grow to: wasm32's 4 GiB (the model modules' limit). */
export const MAX_HEAP_BYTES = 2 ** 32;
/** The engine modules' limit (-sMAXIMUM_MEMORY=2GB), for modules built before heapLimit(). */
export const ENGINE_HEAP_BYTES = 2 ** 31;

/** How far `module`'s heap may grow: 2 GiB for the engine modules, 4 GiB for the model modules. */
export function heapLimit(module) {
  return typeof module.heapLimit === 'function' ? module.heapLimit() : ENGINE_HEAP_BYTES;
}

const align = (n) => Math.ceil(n / 16) * 16;

export class CallBuffers {
  /** @param {object} module Emscripten module  @param {Record<string, number>} bytes slot sizes */
  constructor(module, bytes, what, workspaceBytes = 0) {
    this.module = module;
    let total = 0;
    const offsets = {};
    for (const [name, size] of Object.entries(bytes)) {
      offsets[name] = size > 0 ? total : -1;
      total += align(size);
    }
    // Check before allocating: a failed allocation inside C++ would abort the module. Memory the
    // heap has not grown into yet is free for certain; only when that is short is malloc asked
    // (heapInUse() is mallinfo, which walks every chunk: ~0.15 ms a call once a model is loaded).
    const needed = total + workspaceBytes;
    const limit = heapLimit(module);
    if (needed > limit - module.HEAPU8.length) {
      const available = limit - module.heapInUse();
      if (needed > available)
        throw new RangeError(
          `${what} needs ${formatBytes(needed)} of working memory, more than ` +
          `the ${formatBytes(available)} left of the ${formatBytes(limit)} ` +
          `this WebAssembly module can address`);
    }
    /** Bytes allocated for this call. */
    this.bytes = total;
    this.base = total > 0 ? module._malloc(total) >>> 0 : 0;
    if (total > 0 && this.base === 0)
      throw new RangeError(`${what} needs ${formatBytes(total)}: the browser could not provide it`);
    this.address = {};
    for (const [name, off] of Object.entries(offsets)) this.address[name] = off < 0 ? 0 : this.base + off;
  }

  write(name, array) {
    if (!array) return;
    const heap = array instanceof Float32Array ? this.module.HEAPF32 : this.module.HEAPU8;
    heap.set(array, (this.address[name] >>> 0) / heap.BYTES_PER_ELEMENT);
  }

  /** A fresh Float32Array the caller owns. */
  readFloats(name, length) {
    const start = (this.address[name] >>> 0) / 4;
    return this.module.HEAPF32.slice(start, start + length);
  }

  /** Copies `target.length` floats of slot `name` straight into the caller's `target`. */
  readInto(name, target) {
    const start = (this.address[name] >>> 0) / 4;
    target.set(this.module.HEAPF32.subarray(start, start + target.length));
    return target;
  }

  /** `into` when given (filled from the heap), else a fresh array of `length` floats. */
  result(name, length, into) {
    return into ? this.readInto(name, into) : this.readFloats(name, length);
  }

  free() {
    if (this.base) this.module._free(this.base);
    this.base = 0;
  }
}

export function formatBytes(n) {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(1)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} bytes`;
}
