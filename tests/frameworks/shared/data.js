// The data every framework app shows (seeded Q, K, V for six tokens, one head), and the page
// each app's index.html loads. Plain data: the apps import it, and so does the test (Node).
const TOKENS = ['frameworks', 'pass', 'properties', 'and', 'get', 'events'];
const D = 3;

function seeded(seed, count) {
  let s = seed >>> 0;
  return Array.from({ length: count }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.round(((s / 2 ** 32) * 4 - 2) * 1000) / 1000;
  });
}
const rows = (flat) => TOKENS.map((_, i) => flat.slice(i * D, (i + 1) * D));

export const DATA = { tokens: TOKENS, Q: rows(seeded(1, TOKENS.length * D)), K: rows(seeded(2, TOKENS.length * D)), V: rows(seeded(3, TOKENS.length * D)) };
