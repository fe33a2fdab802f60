// Shows the runtime's boot progress, and a plain-words alert when it cannot start.

import { showAlert } from "../page/alert.js";

// Where the bar stands at each stage; while the downloads arrive (a host that counts them gives
// the fraction that has), it moves from 5% to 80% with the bytes.
const STAGES = { runtime: 0.2, python: 0.45, numpy: 0.7, explorer: 0.9 };
const $ = /** @type {ById} */ ((id) => document.getElementById(id));
let shown = 0;

/**
 * @param {string} stage "runtime" | "python" | "numpy" | "explorer"
 * @param {string} text
 * @param {number} [fraction] how much of the boot's downloads has arrived, 0 to 1
 */
export function showBoot(stage, text, fraction) {
  $("boot-status").textContent = text;
  const f = typeof fraction === "number" ? 0.05 + 0.75 * Math.max(0, Math.min(1, fraction)) : STAGES[stage];
  if (f === undefined || f < shown) return; // never backwards
  shown = f;
  const bar = $("boot-progress");
  bar.style.width = `${Math.round(f * 100)}%`;
  bar.parentElement.setAttribute("aria-valuenow", String(Math.round(f * 100)));
}

export function bootDone() {
  $("boot-progress").style.width = "100%";
  $("boot-status").textContent = "Ready: edit any number.";
  $("boot").classList.add("done");
}

/**
 * @param {string} message
 * @param {string} [status]
 */
export function bootFailed(message, status = "The Python runtime could not start.") {
  $("boot").classList.add("failed");
  $("boot-status").textContent = status;
  showAlert(message);
  document.documentElement.dataset.bootFailed = "true";
}
