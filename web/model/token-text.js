// Tokens as readable text for figures: a byte-level piece (GPT-2's alphabet, `Ġworld`) back to
// its bytes and then to text, each byte that is not part of a whole UTF-8 character shown as
// `<0xHH>` (as stories260K's byte-fallback pieces read).

// GPT-2's byte-level alphabet: byte b is the character bytesToUnicode[b] (printable bytes stand
// for themselves, the others are shifted to U+0100…).
const BYTE_OF_CHAR = (() => {
  const map = new Map();
  let shifted = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    map.set(String.fromCodePoint(printable ? b : 256 + shifted++), b);
  }
  return map;
})();

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });  // U+FEFF is content

/** Bytes as text, each byte that is not part of a whole UTF-8 character as `<0xHH>`. */
export function readableBytes(bytes) {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    let out = '';
    for (let i = 0; i < bytes.length;) {
      const b = bytes[i];
      const length = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
      if (length > 0 && i + length <= bytes.length) {
        try {
          out += strictUtf8.decode(bytes.subarray(i, i + length));
          i += length;
          continue;
        } catch { /* not a whole character: shown as bytes below */ }
      }
      out += `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
      i += 1;
    }
    return out;
  }
}

/** The readable text of a byte-level piece, or null when it has a character outside the alphabet. */
export function byteLevelText(piece) {
  const bytes = [];
  for (const ch of piece) {
    const b = BYTE_OF_CHAR.get(ch);
    if (b === undefined) return null;
    bytes.push(b);
  }
  return readableBytes(Uint8Array.from(bytes));
}
