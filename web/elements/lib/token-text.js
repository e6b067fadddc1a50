// Tokens read back as the text they came from (for <attn-text> and its SVG): each token's
// leading whitespace is kept as a gap before its word (" world", "▁world" and GPT-2's "Ġworld" are
// a space and "world"; "Ċ" and "\n" are line breaks), a WordPiece "##ing" joins the word before
// it. Tokens with no such marks at all (a sentence split at spaces) are words: a space between.
// Only text comes out (never markup): the element puts it in text nodes, the SVG escapes it.

const MARKED = /^([\s\u2581\u0120\u010A]|##)/;
const BYTE_SPACES = { '\u2581': ' ', '\u0120': ' ', '\u010A': '\n' };

/**
 * [{ gap, word, breakAfter }] per token: `gap` is the whitespace shown before it, `word` the rest;
 * a token that is only whitespace shows as ␣ (or ↵, then `breakAfter`: the line ends after it).
 */
export function tokenPieces(tokens) {
  const marked = tokens.some((t) => MARKED.test(t));
  return tokens.map((token, j) => {
    if (!marked) return { gap: j === 0 ? '' : ' ', word: token, breakAfter: false };
    if (token.startsWith('##') && token.length > 2) return { gap: '', word: token.slice(2), breakAfter: false };
    const text = token.replace(/^[\u2581\u0120\u010A]+/, (marks) => [...marks].map((c) => BYTE_SPACES[c]).join(''));
    const [, gap, word] = /^(\s*)([\s\S]*)$/.exec(text);
    // A token that is only whitespace keeps one visible box (a tint needs somewhere to show).
    if (word === '') return gap.includes('\n') ? { gap: '', word: '↵', breakAfter: true } : { gap: '', word: '␣', breakAfter: false };
    return { gap: j === 0 ? '' : gap.replace(/[^\n]+/g, ' '), word, breakAfter: false };
  });
}

/**
 * Lays `pieces` out in lines of at most `width` units (widths estimated: `char` per character):
 * [{ x, line, w }] per piece, and the number of lines. A gap is `space` wide; '\n' starts a line.
 */
export function flowPieces(pieces, { width, char = 7.2, space = 4, pad = 4, left = 0 } = {}) {
  const boxes = [];
  let x = left, line = 0;
  for (const { gap, word, breakAfter } of pieces) {
    for (const c of gap) {
      if (c === '\n') { x = left; line++; } else if (x > left) x += space;
    }
    const w = Math.max(6, [...word].length * char + pad);
    if (x + w > left + width && x > left) { x = left; line++; }
    boxes.push({ x, line, w });
    x += w;
    if (breakAfter) { x = left; line++; }
  }
  return { boxes, lines: line + 1 };
}
