// Zoom and pan over a rows × cols table (the heatmap): which window of cells is visible, and the
// wheel / drag / pinch gestures that move it. DOM-free apart from the gesture listeners.

/** The visible window: `zoom` ≥ 1 and the first visible column `x` and row `y` (in cells, fractional). */
export class ZoomView {
  zoom = 1;
  x = 0;
  y = 0;

  constructor(rows = 1, cols = 1, maxZoom = 1) {
    this.resize(rows, cols, maxZoom);
  }

  /** New table size or zoom limit; keeps the window inside the table. */
  resize(rows, cols, maxZoom) {
    this.rows = rows;
    this.cols = cols;
    this.maxZoom = Math.max(1, maxZoom);
    return this.#clamp();
  }

  /** Visible rows and columns (fractional). */
  get visibleRows() { return this.rows / this.zoom; }
  get visibleCols() { return this.cols / this.zoom; }
  get zoomed() { return this.zoom > 1; }
  get zoomable() { return this.maxZoom > 1; }

  /** { zoom, row, col, rows, cols }: the first visible row/column and how many are visible. */
  get state() {
    return { zoom: this.zoom, row: this.y, col: this.x, rows: this.visibleRows, cols: this.visibleCols };
  }

  /** Zooms to `zoom`, keeping the cell at fractions (fx, fy) of the window where it is. */
  zoomTo(zoom, fx = 0.5, fy = 0.5) {
    const z = Math.min(this.maxZoom, Math.max(1, zoom));
    const cx = this.x + fx * this.visibleCols, cy = this.y + fy * this.visibleRows;
    this.zoom = z;
    this.x = cx - fx * this.visibleCols;
    this.y = cy - fy * this.visibleRows;
    return this.#clamp();
  }

  /** Moves the window by (dx, dy) cells. */
  panBy(dx, dy) {
    this.x += dx;
    this.y += dy;
    return this.#clamp();
  }

  /** Centres the window on cell (row, col) (fractional allowed). */
  centreOn(row, col) {
    this.x = col - this.visibleCols / 2;
    this.y = row - this.visibleRows / 2;
    return this.#clamp();
  }

  /** Pans as little as possible so that cell (i, j) is inside the window. */
  reveal(i, j) {
    if (j < this.x) this.x = j;
    else if (j + 1 > this.x + this.visibleCols) this.x = j + 1 - this.visibleCols;
    if (i < this.y) this.y = i;
    else if (i + 1 > this.y + this.visibleRows) this.y = i + 1 - this.visibleRows;
    return this.#clamp();
  }

  reset() {
    this.zoom = 1;
    this.x = 0;
    this.y = 0;
    return true;
  }

  // Keeps zoom in [1, maxZoom] and the window inside the table.
  #clamp() {
    this.zoom = Math.min(this.maxZoom, Math.max(1, this.zoom));
    this.x = Math.min(Math.max(0, this.x), this.cols - this.visibleCols);
    this.y = Math.min(Math.max(0, this.y), this.rows - this.visibleRows);
    return true;
  }
}

/**
 * Wheel (zoom at the pointer), drag with a mouse or one finger (pan when zoomed) and two-finger
 * pinch (zoom and pan) on `target`. `cellSize()` gives the CSS pixels of one visible cell,
 * `origin()` the client position of the table's top-left corner; `changed()` redraws. Returns
 * { dragged(): whether the last press moved (the click that follows is not a pick), stop() }.
 */
export function zoomGestures(target, view, { cellSize, origin, changed }) {
  const pointers = new Map();  // pointerId → { x, y }
  let moved = false, pinch = null;
  const fractions = (clientX, clientY) => {
    const o = origin(), s = cellSize();
    return [(clientX - o.x) / s / view.visibleCols, (clientY - o.y) / s / view.visibleRows];
  };
  const wheel = (event) => {
    if (!view.zoomable) return;  // nothing to zoom: let the page scroll
    event.preventDefault();
    const lines = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1;
    const [fx, fy] = fractions(event.clientX, event.clientY);
    view.zoomTo(view.zoom * Math.exp(-event.deltaY * lines * 0.002), clamp01(fx), clamp01(fy));
    changed();
  };
  const down = (event) => {
    if (event.pointerType === 'mouse' && event.button !== 0) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY, startX: event.clientX, startY: event.clientY });
    moved = false;
    if (pointers.size === 2) pinch = pinchOf(pointers);
    if (view.zoomed || pointers.size === 2) target.setPointerCapture?.(event.pointerId);
  };
  const move = (event) => {
    const last = pointers.get(event.pointerId);
    if (!last) return;
    const dx = event.clientX - last.x, dy = event.clientY - last.y;
    last.x = event.clientX;
    last.y = event.clientY;
    if (pointers.size === 2 && pinch) {
      const now = pinchOf(pointers);
      const [fx, fy] = fractions(now.x, now.y);
      const s = cellSize();
      view.panBy(-(now.x - pinch.x) / s, -(now.y - pinch.y) / s);
      view.zoomTo(view.zoom * (now.distance / pinch.distance), clamp01(fx), clamp01(fy));
      pinch = now;
      moved = true;
      changed();
      return;
    }
    if (!view.zoomed) return;
    if (dx === 0 && dy === 0) return;
    const s = cellSize();
    view.panBy(-dx / s, -dy / s);
    moved ||= Math.hypot(event.clientX - last.startX, event.clientY - last.startY) > 3;
    changed();
  };
  const up = (event) => {
    pointers.delete(event.pointerId);
    if (pointers.size < 2) pinch = null;
  };
  const listeners = [['wheel', wheel, { passive: false }], ['pointerdown', down], ['pointermove', move],
    ['pointerup', up], ['pointercancel', up]];
  for (const [name, f, options] of listeners) target.addEventListener(name, f, options);
  return {
    dragged: () => moved,
    stop: () => { for (const [name, f, options] of listeners) target.removeEventListener(name, f, options); },
  };
}

const clamp01 = (x) => Math.min(1, Math.max(0, x));

function pinchOf(pointers) {
  const [a, b] = [...pointers.values()];
  return { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2, distance: Math.max(1, Math.hypot(a.x - b.x, a.y - b.y)) };
}
