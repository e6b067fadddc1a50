// Attention weights computed head by head when first read. A heatmap shows one head (or a mean
// over them): computing all eight heads of n = 512 after each temperature, scale or mask change
// cost ~12 ms of a 16 ms frame on one thread, one head ~1.5 ms. A result's `weights` is an
// array with one Float32Array [heads·nQ·nK] per layer: reading `weights[layer]`
// fills that layer's missing heads first, so code that reads every head (aggregates, rollout,
// exports, the grid of heads) gets correct numbers; `lazyHead` (compute.js headMatrix) fills one.
// DOM-free.

const controllers = new WeakMap();  // a result's weights array → its LazyWeights
const owners = new WeakMap();       // a (pooled) array → the LazyWeights whose numbers it holds

export class LazyWeights {
  #heads;
  #size;
  #provide;
  #compute;
  #whole;
  #buffers;
  #done;
  #lost;

  /**
   * `layers`, `heads`, `size` (nQ·nK, one head's cells); `provide(layer)` → the Float32Array
   * [heads·size] to write that layer into (a BufferPool's array, or a fresh one), asked for when
   * the layer is first written; `compute(layer, first, count, target)` writes heads first …
   * first+count−1 into `target` (a view of count·size floats); `whole`: only whole layers can be
   * computed (the engine's projections compute every head at once).
   */
  constructor({ layers, heads, size, provide, compute, whole = false }) {
    this.#heads = heads;
    this.#size = size;
    this.#provide = provide;
    this.#compute = compute;
    this.#whole = whole;
    this.#buffers = new Array(layers).fill(null);
    this.#done = Array.from({ length: layers }, () => new Uint8Array(heads));
    this.#lost = new Uint8Array(layers);
  }

  /** Layer `layer`'s array with every head computed. */
  layer(layer) {
    return this.#ready(layer, 0, this.#heads);
  }

  /** Head `head` of layer `layer` (a view of nQ·nK floats), computed if it was not yet. */
  head(layer, head) {
    return this.#ready(layer, head, head + 1).subarray(head * this.#size, (head + 1) * this.#size);
  }

  /** Whether head `head` of `layer` is computed and still held (for tests and benchmarks). */
  computed(layer, head) {
    const buffer = this.#buffers[layer];
    return buffer !== null && owners.get(buffer) === this && this.#done[layer][head] === 1;
  }

  #ready(layer, from, to) {
    if (!(layer >= 0 && layer < this.#buffers.length)) throw new RangeError(`layer ${layer} is not in these weights (0 to ${this.#buffers.length - 1})`);
    if (!(from >= 0 && to <= this.#heads)) throw new RangeError(`head ${from} is not in these weights (0 to ${this.#heads - 1})`);
    const done = this.#done[layer];
    let buffer = this.#buffers[layer];
    if (buffer !== null && owners.get(buffer) !== this) {
      // A later result of the same figure now writes into this pooled array: this (older)
      // result computes again, into an array of its own.
      buffer = null;
      done.fill(0);
      this.#lost[layer] = 1;
    }
    if (buffer === null) {
      buffer = this.#lost[layer] ? new Float32Array(this.#heads * this.#size) : this.#provide(layer);
      owners.set(buffer, this);
      this.#buffers[layer] = buffer;
    }
    if (this.#whole) [from, to] = [0, this.#heads];
    // Missing heads in runs: one engine call per run (all heads at once when none is there).
    for (let h = from; h < to;) {
      if (done[h]) { h++; continue; }
      let end = h + 1;
      while (end < to && !done[end]) end++;
      this.#compute(layer, h, end - h, buffer.subarray(h * this.#size, end * this.#size));
      done.fill(1, h, end);
      h = end;
    }
    return buffer;
  }
}

/** An array of `layers` entries whose `[layer]` is `lazy.layer(layer)` (computed when read). */
export function lazyWeightsArray(lazy, layers) {
  const weights = new Array(layers);
  for (let l = 0; l < layers; l++)
    Object.defineProperty(weights, l, { get: () => lazy.layer(l), enumerable: true });
  controllers.set(weights, lazy);
  return weights;
}

/** The LazyWeights behind a result's weights array, or null when they are plain arrays. */
export const lazyOf = (weights) => (weights ? controllers.get(weights) ?? null : null);
