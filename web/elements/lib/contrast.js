// WCAG contrast: which text colour reads on a tint (≥ 4.5:1, the level the figures promise).

const channel = (c) => {
  const s = c / 255;
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
};

/** Relative luminance of [r, g, b] (0–255). */
export const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);

/** The WCAG contrast ratio of two colours (1 … 21). */
export function contrastRatio(a, b) {
  const x = luminance(a), y = luminance(b);
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/**
 * The first of `preferred` (e.g. the theme's text and background colours) with at least
 * `minimum`:1 contrast on `background`; else black or white, whichever contrasts more.
 */
export function readableOn(background, preferred, minimum = 4.5) {
  for (const c of preferred) if (contrastRatio(c, background) >= minimum) return c;
  return contrastRatio([0, 0, 0], background) >= contrastRatio([255, 255, 255], background) ? [0, 0, 0] : [255, 255, 255];
}
