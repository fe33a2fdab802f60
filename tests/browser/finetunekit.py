"""What the tests of the "Fine-tune the head" panel share (test_page_finetune.py,
test_page_finetune_play.py): training written out in plain NumPy from the formulas (LayerNorm
without gamma/beta, logits = h_hat @ W_head, softmax cross-entropy, the SGD update), and the
panel's controls used as a person uses them. Nothing of pycore computes the expected numbers."""
import re

import numpy as np

WORKED_CLS = [[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]]
WORKED_W = [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]]


# ---- the math, written out here ------------------------------------------------------------

def layer_norm(x):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-6)


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def loss_of(h_hat, W, y):
    p = softmax(h_hat @ W)
    return float(-np.mean(np.log(p[np.arange(len(y)), y])))


def sgd(h_cls, y, W0, lr, steps):
    """(losses: step 0 first, then after each update; the W_head after `steps` updates)."""
    h_hat, W, y = layer_norm(np.asarray(h_cls, float)), np.array(W0, float), np.asarray(y)
    losses = []
    for _ in range(steps):
        losses.append(loss_of(h_hat, W, y))
        delta = softmax(h_hat @ W)
        delta[np.arange(len(y)), y] -= 1.0
        W = W - lr * (h_hat.T @ delta) / len(y)
    losses.append(loss_of(h_hat, W, y))
    return losses, W


# ---- what the page shows -------------------------------------------------------------------

def idle(page):
    """Wait until the panel's requests are answered and drawn (data-busy, data-playing)."""
    page.wait_for_function("""() => { const s = document.getElementById('finetune').dataset;
        return s.busy === 'false' && s.playing === 'false'; }""", timeout=60000)


def run_steps(page):
    return int(page.evaluate("document.getElementById('finetune').dataset.runSteps || '0'"))


def curve(page, element_id="loss-curve"):
    """{trace name: y} of a chart, and data[0].y."""
    traces = page.evaluate("""id => (document.getElementById(id).data || [])
        .map(t => [t.name, Array.from(t.y)])""", element_id)
    return dict(traces), (traces[0][1] if traces else [])


def labels_shown(page):
    return [int(v) for v in page.evaluate(
        "() => Array.from(document.querySelectorAll('#ft-labels input')).map(i => i.value)")]


def click_and_wait(page, selector):
    page.click(selector)
    idle(page)


def step(page, times=1):
    for _ in range(times):
        before = run_steps(page)
        page.click("#ft-step")
        page.wait_for_function("n => Number(document.getElementById('finetune').dataset.runSteps) > n",
                               arg=before, timeout=60000)
        idle(page)


def play_until(page, steps):
    page.click("#ft-play")
    page.wait_for_function("n => Number(document.getElementById('finetune').dataset.runSteps) >= n",
                           arg=steps, timeout=120000)
    page.click("#ft-play")  # Pause
    idle(page)


def type_label(page, b, text):
    box = page.get_by_label(re.compile(r"^Label of sample %d " % b))
    box.click()
    box.press("Control+A")
    box.press("Backspace")
    box.press_sequentially(text)
    return box


def load_means(page):
    click_and_wait(page, "#ft-load-means")
    page.wait_for_function("() => document.querySelectorAll('#ft-labels input').length === 60")
