// Numbers as a person reads them: the one short form of a value in the editors' cells and in
// the heatmaps' hovers. Up to 4 decimals, trailing zeros dropped ("0.5", "-1.2649", "2"), and
// no more than 8 characters, so a cell never shows a number cut mid-digit: from 1,000 on fewer
// decimals ("1234.568", "-1234.57"), and 4 significant digits in scientific notation (3 when
// negative) from 100,000 on or below 0.0001 ("1.235e+6", "-6.32e-5"). A focused cell, the
// exports and the "Show the numbers" tables keep the full value.

const MAX_CHARS = 8;

/**
 * @param {number} x
 * @returns {string}
 */
export function shortNumber(x) {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "inf" : "-inf";
  if (x === 0) return "0";
  const size = Math.abs(x);
  if (size >= 1e5 || size < 1e-4) return x.toExponential(x < 0 ? 2 : 3).replace(/\.?0+e/, "e");
  const whole = String(Math.trunc(size)).length + (x < 0 ? 1 : 0);
  const decimals = Math.max(0, Math.min(4, MAX_CHARS - whole - 1));
  let text = x.toFixed(decimals);
  if (text.includes(".")) text = text.replace(/\.?0+$/, "");
  return text === "-0" ? "0" : text;
}
