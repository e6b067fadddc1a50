// Keyboard and screen-reader helpers shared by the figures.

export const quote = (token) => `“${token}”`;
export const fmt = (w, digits = 2) => (Number.isFinite(w) ? w.toFixed(digits) : w > 0 ? '∞' : '−∞');

/** The `count` largest entries of `row` (skipping masked ones), largest first: [{ index, value }]. */
export function strongest(row, count = 3, masked = () => false) {
  const top = [];
  for (let j = 0; j < row.length; j++) {
    if (masked(j)) continue;
    const value = row[j];
    if (top.length < count || value > top[top.length - 1].value) {
      top.push({ index: j, value });
      top.sort((a, b) => b.value - a.value || a.index - b.index);
      if (top.length > count) top.pop();
    }
  }
  return top;
}

/** “it” (8 of 11) attends most to “cat” 0.62, “it” 0.12 and “mat” 0.08. */
export function describeRow(tokens, query, row, masked, keyTokens = tokens) {
  const top = strongest(row, 3, masked);
  const head = `${quote(tokens[query])} (token ${query + 1} of ${tokens.length})`;
  if (top.length === 0 || top[0].value === 0) return `${head} attends to no token: every key is masked.`;
  const parts = top.map(({ index, value }) => `${quote(keyTokens[index])} ${fmt(value)}`);
  const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0];
  return `${head} attends most to ${list}.`;
}

/** A few words on what a head mostly does (for its label): itself, the previous or first token. */
export function headPattern(weights, n) {
  let self = 0, previous = 0, first = 0;
  for (let i = 0; i < n; i++) {
    self += weights[i * n + i];
    if (i > 0) previous += weights[i * n + i - 1];
    first += weights[i * n];
  }
  const share = [['itself', self / n], ['the previous token', n > 1 ? previous / (n - 1) : 0], ['the first token', first / n]]
    .sort((a, b) => b[1] - a[1])[0];
  return share[1] >= 0.4 ? `mostly looks at ${share[0]} (${fmt(share[1])} on average)` : 'spreads its attention';
}

/**
 * The index a navigation key moves to in a list of `count` items laid out in rows of `columns`
 * (1 = a vertical list; count = a horizontal one), or null when the key is not a navigation key.
 */
export function navigate(key, index, count, { columns = count, page = 10 } = {}) {
  const last = count - 1;
  const at = Math.max(0, Math.min(last, index));
  switch (key) {
    case 'ArrowRight': return Math.min(last, at + 1);
    case 'ArrowLeft': return Math.max(0, at - 1);
    case 'ArrowDown': return columns >= count ? Math.min(last, at + 1) : Math.min(last, at + columns);
    case 'ArrowUp': return columns >= count ? Math.max(0, at - 1) : Math.max(0, at - columns);
    case 'Home': return 0;
    case 'End': return last;
    case 'PageDown': return Math.min(last, at + page * (columns >= count ? 1 : columns));
    case 'PageUp': return Math.max(0, at - page * (columns >= count ? 1 : columns));
    default: return null;
  }
}

export const isActivation = (event) => event.key === 'Enter' || event.key === ' ';

/** Whether the reader asked for less motion: Scan, Play and autoplay then step instead of animating. */
export const reducedMotion = () => globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;

/** Sets a polite live region's text so screen readers read it (even when it repeats). */
export function announce(region, text) {
  if (region.textContent === text) region.textContent = '';
  region.textContent = text;
}
