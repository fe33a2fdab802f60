// Shows the runtime's boot progress, and a plain-words alert when it cannot start.

const STAGES = { runtime: 0.2, python: 0.45, numpy: 0.7, explorer: 0.9 };
const $ = (id) => document.getElementById(id);

export function showBoot(stage, text) {
  $("boot-status").textContent = text;
  const f = STAGES[stage];
  if (f !== undefined) $("boot-progress").style.width = `${Math.round(f * 100)}%`;
}

export function bootDone() {
  $("boot-progress").style.width = "100%";
  $("boot-status").textContent = "Ready: edit any number.";
  $("boot").classList.add("done");
}

export function bootFailed(message) {
  $("boot").classList.add("failed");
  $("boot-status").textContent = "The Python runtime could not start.";
  const box = $("alert");
  box.textContent = message;
  box.hidden = false;
  document.documentElement.dataset.bootFailed = "true";
}
