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
