// Argument checks for the public API. Embind would silently turn a bad argument into 0, so every
// value is checked here first: wrong types throw TypeError, wrong values RangeError, and every
// message names the argument.

export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an Array';
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'Object'})`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return `${typeof value} ${String(value)}`;
}

export function options(name, value, allowed) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new TypeError(`${name} must be an object (got ${describe(value)})`);
  for (const key of Object.keys(value))
    if (!allowed.includes(key))
      throw new TypeError(`${name} has an unknown option '${key}' (known: ${allowed.join(', ')})`);
  return value;
}

// The type only: finiteness is checked in wasm once the values are copied in (Lens#copyIn),
// which is much faster than a scan here; the message is nonFinite()'s.
export function floatArray(name, value, { optional = false } = {}) {
  if (optional && (value === undefined || value === null)) return null;
  if (!(value instanceof Float32Array))
    throw new TypeError(`${name} must be a Float32Array (got ${describe(value)})`);
  return value;
}

export function nonFinite(name, array, i) {
  return new RangeError(`${name}[${i}] is ${array[i]}: every value must be finite`);
}

export function positiveInteger(name, value, fallback) {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number (got ${describe(value)})`);
  if (!Number.isInteger(value) || value <= 0)
    throw new RangeError(`${name} must be a positive integer (got ${value})`);
  return value;
}

export function boolean(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new TypeError(`${name} must be true or false (got ${describe(value)})`);
  return value;
}

export function scale(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number (got ${describe(value)})`);
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a finite number > 0 (got ${value})`);
  // float32 is what the engine uses: a positive double may round to 0 or Infinity there.
  const f = Math.fround(value);
  if (f === 0 || !Number.isFinite(f))
    throw new RangeError(`${name} (${value}) is outside float32's range`);
  return value;
}

export function keyMask(name, value, nK) {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Uint8Array))
    throw new TypeError(`${name} must be a Uint8Array of 0/1 (got ${describe(value)})`);
  if (value.length !== nK)
    throw new RangeError(`${name} must have nK = ${nK} entries (got ${value.length})`);
  for (let i = 0; i < value.length; i++)
    if (value[i] > 1) throw new RangeError(`${name}[${i}] is ${value[i]}: use 1 to keep a key, 0 to drop it`);
  return value;
}

// Rows of a [rows, width] (per head) buffer: length must be a positive multiple.
export function rowsOf(name, array, perRow, perRowText) {
  const rows = array.length / perRow;
  if (!Number.isInteger(rows) || rows < 1)
    throw new RangeError(
      `${name}.length (${array.length}) must be a positive multiple of ${perRowText} (${perRow})`);
  return rows;
}

export function exactLength(name, array, want, wantText) {
  if (array.length !== want)
    throw new RangeError(`${name}.length must be ${wantText} = ${want} (got ${array.length})`);
}

/**
 * `options.into`: caller-owned Float32Arrays the results are written into. `slots` maps each
 * result to [length, lengthText] when it is computed, or to the reason it is not (a string).
 * Checks type (TypeError), exact length and overlap (RangeError), and refuses views of the
 * engine's own memory (`heap`: its ArrayBuffer), which a later call may overwrite or detach.
 */
export function into(name, value, slots, heap) {
  if (value === undefined || value === null) return {};
  const given = options(name, value, Object.keys(slots));
  const arrays = {};
  for (const [slot, want] of Object.entries(slots)) {
    const array = given[slot];
    if (array === undefined || array === null) continue;
    const label = `${name}.${slot}`;
    if (!(array instanceof Float32Array))
      throw new TypeError(`${label} must be a Float32Array (got ${describe(array)})`);
    if (array.buffer === heap)
      throw new TypeError(`${label} is a view of the engine's own WebAssembly memory: pass an array of your own`);
    if (typeof want === 'string') throw new RangeError(`${label} is given but ${want}: nothing would be written to it`);
    exactLength(label, array, want[0], want[1]);
    for (const [other, otherArray] of Object.entries(arrays))
      if (overlaps(array, otherArray))
        throw new RangeError(`${label} and ${name}.${other} share memory: each result needs an array of its own`);
    arrays[slot] = array;
  }
  return arrays;
}

function overlaps(a, b) {
  if (a.buffer !== b.buffer) return false;
  return a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}
