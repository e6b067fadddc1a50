// How a language model's pieces read as labels: a SentencePiece word start (a leading space, or
// '▁' in USE-lite's vocabulary) is dropped so " cat" reads "cat"; a piece that is only
// whitespace stays visible as ␣ ↵ ⇥, and an empty one (a byte that is part of a character) as ∅.
const VISIBLE = { ' ': '␣', '\u2581': '␣', '\n': '↵', '\r': '↵', '\t': '⇥' };
const show = (text) => text.replace(/[ \u2581\n\r\t]/g, (c) => VISIBLE[c]);

/** The label of one piece (BOS stays '<s>'). */
export function tokenLabel(piece) {
  if (piece === '') return '∅';
  if (/^[\s\u2581]+$/.test(piece)) return show(piece);
  const word = piece.length > 1 && (piece[0] === ' ' || piece[0] === '\u2581') ? piece.slice(1) : piece;
  return word.replace(/[\n\r\t]/g, (c) => VISIBLE[c]);
}

// A byte-fallback piece (ids 3…258 are <0x00>…<0xFF> in llama2.c vocabularies) that is not a
// character on its own: the language model's tokens read as U+FFFD.
export const isBytePiece = (id, token) => id >= 3 && id <= 258 && token === '\uFFFD';
const byteName = (id) => `<0x${(id - 3).toString(16).toUpperCase().padStart(2, '0')}>`;

/** Labels of a causal LM's tokens: tokenLabel, but a byte piece as its name (<0xC3>), not �. */
export function pieceLabels(ids, tokens) {
  return tokens.map((t, j) => (isBytePiece(ids[j], t) ? byteName(ids[j]) : tokenLabel(t)));
}
