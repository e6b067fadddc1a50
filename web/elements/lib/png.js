// A small PNG encoder in plain JavaScript (no canvas, no DOM), so an SVG export that embeds an
// image is byte-identical in Node and in every browser. Deflate with fixed Huffman codes and
// matches at two distances only (1: a run of one pixel; the row stride: a repeated row), which
// is what scaled-up matrices are made of. Synchronous; output depends only on the input.

const CRC_TABLE = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  CRC_TABLE[n] = c >>> 0;
}

function crc32(bytes, crc = 0xffffffff) {
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return crc;
}

function adler32(bytes) {
  let a = 1, b = 0;
  for (let i = 0; i < bytes.length;) {
    const end = Math.min(bytes.length, i + 5552);  // largest run before the sums can overflow
    for (; i < end; i++) { a += bytes[i]; b += a; }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Bits written least-significant first into a growing byte array (deflate's bit order). */
class BitWriter {
  #bytes = new Uint8Array(1 << 16);
  #length = 0;
  #acc = 0;
  #count = 0;

  bits(value, count) {
    this.#acc |= value << this.#count;
    this.#count += count;
    while (this.#count >= 8) {
      this.#byte(this.#acc & 0xff);
      this.#acc >>>= 8;
      this.#count -= 8;
    }
  }

  /** A Huffman code (written most-significant bit first). */
  code(value, count) {
    let reversed = 0;
    for (let i = 0; i < count; i++) reversed |= ((value >>> i) & 1) << (count - 1 - i);
    this.bits(reversed, count);
  }

  #byte(b) {
    if (this.#length === this.#bytes.length) {
      const grown = new Uint8Array(this.#bytes.length * 2);
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    this.#bytes[this.#length++] = b;
  }

  finish() {
    if (this.#count > 0) this.bits(0, 8 - this.#count);
    return this.#bytes.slice(0, this.#length);
  }
}

const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];

/** A literal/length symbol in the fixed Huffman code (RFC 1951, 3.2.6). */
function symbol(out, s) {
  if (s < 144) out.code(0x30 + s, 8);
  else if (s < 256) out.code(0x190 + s - 144, 9);
  else if (s < 280) out.code(s - 256, 7);
  else out.code(0xc0 + s - 280, 8);
}

const lastBelow = (table, x) => { let i = 0; while (i + 1 < table.length && table[i + 1] <= x) i++; return i; };

function match(out, length, distance) {
  const l = lastBelow(LENGTH_BASE, length);
  symbol(out, 257 + l);
  if (LENGTH_EXTRA[l]) out.bits(length - LENGTH_BASE[l], LENGTH_EXTRA[l]);
  const d = lastBelow(DIST_BASE, distance);
  out.code(d, 5);
  if (DIST_EXTRA[d]) out.bits(distance - DIST_BASE[d], DIST_EXTRA[d]);
}

/** zlib-format data (RFC 1950) of `bytes`; `stride` is the other distance worth matching. */
export function zlib(bytes, stride = 0) {
  const out = new BitWriter();
  out.bits(0x78, 8);
  out.bits(0x01, 8);
  out.bits(1, 1);  // final block
  out.bits(1, 2);  // fixed Huffman codes
  const n = bytes.length;
  for (let i = 0; i < n;) {
    let best = 0, bestDistance = 0;
    for (const distance of stride > 1 ? [1, stride] : [1]) {
      if (distance > i) continue;
      let length = 0;
      const max = Math.min(258, n - i);
      while (length < max && bytes[i + length] === bytes[i + length - distance]) length++;
      if (length > best) { best = length; bestDistance = distance; }
    }
    if (best >= 3) {
      match(out, best, bestDistance);
      i += best;
    } else symbol(out, bytes[i++]);
  }
  symbol(out, 256);
  const body = out.finish();
  const result = new Uint8Array(body.length + 4);
  result.set(body);
  new DataView(result.buffer).setUint32(body.length, adler32(bytes));
  return result;
}

function chunk(type, data) {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, (crc32(out.subarray(4, 8 + data.length)) ^ 0xffffffff) >>> 0);
  return out;
}

/**
 * A PNG file (Uint8Array) of a width×height image: either `rgba` (4 bytes a pixel) or
 * `indices` (1 byte a pixel) into `palette` (3 bytes an entry, at most 256 entries).
 */
export function encodePNG({ width, height, rgba, indices, palette }) {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new RangeError(`PNG size must be whole numbers ≥ 1 (got ${width}×${height})`);
  const channels = rgba ? 4 : 1, pixels = rgba ?? indices;
  if (!(pixels instanceof Uint8Array) && !(pixels instanceof Uint8ClampedArray))
    throw new TypeError('encodePNG needs `rgba` or `indices` as a Uint8Array');
  if (pixels.length !== width * height * channels)
    throw new RangeError(`PNG pixels: expected ${width * height * channels} bytes, got ${pixels.length}`);
  if (!rgba && (!(palette instanceof Uint8Array) || palette.length % 3 || palette.length > 768 || !palette.length))
    throw new RangeError('encodePNG: `palette` must be a Uint8Array of 1–256 RGB entries');
  const stride = width * channels + 1;
  const raw = new Uint8Array(stride * height);  // filter type 0 (none) at the start of each row
  for (let y = 0; y < height; y++) raw.set(pixels.subarray(y * (stride - 1), (y + 1) * (stride - 1)), y * stride + 1);
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header[8] = 8;  // bits per sample
  header[9] = rgba ? 6 : 3;  // RGBA or palette
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header)];
  if (!rgba) parts.push(chunk('PLTE', palette));
  parts.push(chunk('IDAT', zlib(raw, stride)), chunk('IEND', new Uint8Array(0)));
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Bytes as base64 text (the same in every runtime). */
export function base64(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i], b = bytes[i + 1], c = bytes[i + 2];
    out += B64[a >> 2] + B64[((a & 3) << 4) | ((b ?? 0) >> 4)]
      + (b === undefined ? '=' : B64[((b & 15) << 2) | ((c ?? 0) >> 6)])
      + (c === undefined ? '=' : B64[c & 63]);
  }
  return out;
}

/** A PNG image as a data: URL (for an SVG <image>). */
export const pngDataURL = (image) => `data:image/png;base64,${base64(encodePNG(image))}`;
