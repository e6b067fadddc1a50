// Result arrays a figure reuses from one computation to the next, so a redraw after a scale,
// temperature or mask change allocates nothing of size n² (a fresh 8 MiB Float32Array, the
// weights of n = 512 and 8 heads, cost ~6 ms in Chromium). Each key keeps two arrays and hands
// them out in turn: the previous result stays intact while the next one is computed, so code
// comparing two consecutive results (el.weights before and after a change) sees both.
export class BufferPool {
  #slots = new Map();

  /** A Float32Array of `length` for `key` (e.g. 'weights/0'): the one not handed out last time. */
  take(key, length) {
    let slot = this.#slots.get(key);
    if (slot?.length !== length) this.#slots.set(key, (slot = { length, arrays: [null, null], next: 0 }));
    const i = slot.next;
    slot.next = 1 - i;
    return (slot.arrays[i] ??= new Float32Array(length));
  }

  /** Forgets every array (new data of another shape). */
  clear() {
    this.#slots.clear();
  }
}
