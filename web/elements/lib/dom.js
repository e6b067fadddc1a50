// Building DOM without markup strings: strings become text nodes, never HTML.

/** h('button', { class: 'x', 'aria-label': 'Play', onclick }, 'text', child) */
export function h(name, attrs = {}, ...children) {
  const el = document.createElement(name);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  el.append(...children.flat()
    .filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : String(c))));
  return el;
}

/** A canvas sized `width`×`height` CSS pixels at the device pixel ratio; returns its 2D context. */
export function sizeCanvas(canvas, width, height, ratio = globalThis.devicePixelRatio || 1) {
  const w = Math.max(1, Math.round(width * ratio)), h2 = Math.max(1, Math.round(height * ratio));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h2) canvas.height = h2;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return ctx;
}
