// The ink of a number printed on a coloured cell, chosen by WCAG 2.2's contrast ratio (1.4.3):
// black or white, whichever contrasts more with the cell. With pure black and white every colour
// has one at 4.58:1 or more (the worst, a mid-tone of relative luminance 0.179, is as far from
// both); #111 and a luma threshold left a quarter of the red-blue scale under 4.5:1.

// WCAG's relative luminance of an sRGB colour (0..255 a channel).
/**
 * @param {number} r
 * @param {number} g
 * @param {number} b
 * @returns {number}
 */
export function luminance(r, g, b) {
  const lin = (v) => {
    const s = v / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

// The contrast ratio of two relative luminances, 1 to 21.
/**
 * @param {number} l1
 * @param {number} l2
 * @returns {number}
 */
export function contrast(l1, l2) {
  return (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
}

// "#000" or "#fff" on a cell of colour (r, g, b).
/**
 * @param {number} r
 * @param {number} g
 * @param {number} b
 * @returns {string}
 */
export function cellInk(r, g, b) {
  const l = luminance(r, g, b);
  return contrast(l, 0) >= contrast(l, 1) ? "#000" : "#fff";
}
