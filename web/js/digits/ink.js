// The drawing pad's ink, without the page: a round pen on a 32 x 32 bitmap counted in 4 x 4
// blocks (the data set's own way of making its 8 x 8 digits, 0..16), and a drawing prepared as the
// data set's digits were before they were counted: scaled to the full height of the box, at most
// 6 pixels wide, centred. js/digits/panel.js draws with it; tests/test_ink.py runs it in Node.

export const SIDE = 8; // pixels per side of the model's image
export const MAX = 16; // a pixel's full ink: 16 bitmap points
export const FINE = 4; // bitmap points per pixel side
export const BITMAP = SIDE * FINE;
// The pen's radius in bitmap points: a dot in a pixel's middle inks all 16 of its points (the
// farthest are 2.12 points away) and none of its neighbours' (the nearest are 2.55 away), with as
// much room on either side for a pointer a pixel or so off the middle.
export const PEN = 2.33;
// The box a pen drawing is fitted into, in pixels (the data set's digits span all 8 rows and
// mostly 5 to 7 columns), less a margin that keeps the pen's ink inside the image.
export const FIT = { height: SIDE, width: 6, margin: 0.3 };

// Ink (ink 1) or erase (ink 0) the bitmap within the pen's radius of each point (row, column in
// pixels); returns the set of pixels (row * SIDE + column) whose points changed.
/**
 * @param {Uint8Array} bitmap
 * @param {number[][]} points [row, column] each
 * @param {0|1} ink
 * @returns {Set<number>}
 */
export function inkPoints(bitmap, points, ink) {
  const touched = new Set();
  for (const [y, x] of points) {
    const fy = y * FINE;
    const fx = x * FINE;
    for (let r = Math.max(0, Math.ceil(fy - PEN - 0.5)); r <= Math.min(BITMAP - 1, Math.floor(fy + PEN - 0.5)); r++) {
      for (let c = Math.max(0, Math.ceil(fx - PEN - 0.5)); c <= Math.min(BITMAP - 1, Math.floor(fx + PEN - 0.5)); c++) {
        if (Math.hypot(r + 0.5 - fy, c + 0.5 - fx) > PEN || bitmap[r * BITMAP + c] === ink) continue;
        bitmap[r * BITMAP + c] = ink;
        touched.add(Math.floor(r / FINE) * SIDE + Math.floor(c / FINE));
      }
    }
  }
  return touched;
}

// The points a pen inks between two pointer events, a bitmap point apart (fast strokes leave
// gaps between events), ending at `to`.
/**
 * @param {number[]} from [row, column]
 * @param {number[]} to
 * @returns {number[][]}
 */
export function between(from, to) {
  const [y0, x0] = from;
  const steps = Math.max(1, Math.ceil(Math.hypot(to[0] - y0, to[1] - x0) * FINE));
  const points = [];
  for (let s = 1; s <= steps; s++) points.push([y0 + ((to[0] - y0) * s) / steps, x0 + ((to[1] - x0) * s) / steps]);
  return points;
}

// Pixel i's ink: the inked points of its 4 x 4 block.
/**
 * @param {Uint8Array} bitmap
 * @param {number} i
 * @returns {number}
 */
export function count(bitmap, i) {
  const r0 = Math.floor(i / SIDE) * FINE;
  const c0 = (i % SIDE) * FINE;
  let n = 0;
  for (let r = r0; r < r0 + FINE; r++) for (let c = c0; c < c0 + FINE; c++) n += bitmap[r * BITMAP + c];
  return n;
}

// The 64 pixels of strokes (each a list of [row, column] pointer positions, in pixels) drawn
// with the pen on an empty bitmap.
/**
 * @param {number[][][]} strokes
 * @returns {number[]}
 */
export function rasterize(strokes) {
  const bitmap = new Uint8Array(BITMAP * BITMAP);
  for (const stroke of strokes) {
    if (!stroke.length) continue;
    inkPoints(bitmap, [stroke[0]], 1);
    for (let k = 1; k < stroke.length; k++) inkPoints(bitmap, between(stroke[k - 1], stroke[k]), 1);
  }
  return Array.from({ length: SIDE * SIDE }, (_, i) => count(bitmap, i));
}

// Strokes moved and scaled into the data set's box: their height (at least a pixel's) fills
// FIT.height less the margins; their width is scaled as much, up to FIT.width less the margins
// (a tall "1" stays narrow; a wide "7" is narrowed); centred on the image's middle. A drawing
// made anywhere on the pad, large or small, reaches the model as the data set's digits did.
/**
 * @param {number[][][]} strokes
 * @returns {number[][][]}
 */
export function fitted(strokes) {
  const points = strokes.flat();
  if (!points.length) return strokes;
  const ys = points.map((p) => p[0]);
  const xs = points.map((p) => p[1]);
  const [y0, y1, x0, x1] = [Math.min(...ys), Math.max(...ys), Math.min(...xs), Math.max(...xs)];
  const sy = (FIT.height - 2 * FIT.margin) / Math.max(y1 - y0, 1);
  const sx = x1 - x0 > 1e-9 ? Math.min(FIT.width - 2 * FIT.margin, (x1 - x0) * sy) / (x1 - x0) : sy;
  const cy = (y0 + y1) / 2;
  const cx = (x0 + x1) / 2;
  return strokes.map((stroke) => stroke.map(([y, x]) => [SIDE / 2 + (y - cy) * sy, SIDE / 2 + (x - cx) * sx]));
}

// What the model reads of a pen drawing: its strokes fitted, then drawn with the same pen.
/**
 * @param {number[][][]} strokes
 * @returns {number[]}
 */
export function prepared(strokes) {
  return rasterize(fitted(strokes));
}
