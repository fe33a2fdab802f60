"""The real-ViT mode of the explorer (pycore/explorer/digits/mode.py and Session.op_digit): drawn
digits encoded by the tiny ViT become the state; the answers keep to the protocol; refusals
change nothing; links carry the pixels and give the same state back.

The expected numbers come from the model itself (load_tiny_vit, tested on its own in
tests/test_tiny_vit.py) and from the head written out with plain NumPy here."""
import json
from urllib.parse import unquote

import numpy as np
import pytest

from pycore import load_tiny_vit
from pycore.explorer import decode_fragment, encode_fragment, state_to_json
from pycore.explorer.export.files import numpy_code
from protocol_check import check_answer
from pycore.explorer.session import Session


@pytest.fixture(scope="module")
def model():
    return load_tiny_vit()


def one():
    """A vertical stroke, as a person draws a "1": ink 16 in column 4, 8 beside it."""
    image = [[0] * 8 for _ in range(8)]
    for r in range(1, 7):
        image[r][4], image[r][3] = 16, 8
    return image


def seven():
    image = [[0] * 8 for _ in range(8)]
    image[1][1:7] = [12, 16, 16, 16, 16, 12]
    for r, c in ((2, 6), (3, 5), (4, 5), (5, 4), (6, 4)):
        image[r][c] = 16
    return image


def head(z_L, W):
    """The head written out again: position 0, LayerNorm without gamma/beta, @ W."""
    h = z_L[:, 0, :]
    mu = h.mean(axis=1, keepdims=True)
    var = ((h - mu) ** 2).mean(axis=1, keepdims=True)
    return (h - mu) / np.sqrt(var + 1e-6) @ W


def snapshot(session):
    s = session.state
    return json.dumps(state_to_json(s)), s.W_head.copy(), s.inputs.copy(), dict(s.options)


def test_drawing_puts_the_models_encoder_output_and_head_into_the_state(model):
    s = Session()
    answer = s.handle({"op": "digit", "images": [one()]})
    check_answer(answer)
    assert answer["ok"] and answer["error"] is None
    images = np.array([one()], dtype=float)
    z_L = model.encode(images)
    assert s.state.mode == "encoder" and s.state.encoder_output.shape == (1, 17, 32)
    np.testing.assert_array_equal(s.state.encoder_output, z_L)
    np.testing.assert_array_equal(s.state.W_head, model.W_head)
    np.testing.assert_allclose(s.trace.logits, head(z_L, model.W_head), atol=1e-12)
    assert int(s.trace.logits.argmax()) == 1                  # the trained model reads a "1"
    assert answer["shape"] == {"mode": "encoder", "B": 1, "D": 32, "C": 10, "N1": 17}
    assert answer["labels"]["classes"] == [str(d) for d in range(10)]
    assert answer["logits_table"]["header"] == [""] + [str(d) for d in range(10)]
    assert answer["top_classes"].startswith("sample 0: digit 1 (")
    assert answer["heatmaps"]["heatmap-logits"]["x_title"] == "class c = digit"
    assert "heatmap-encoder" in answer["heatmaps"]


def test_the_digit_section_shows_the_pixels_the_attention_and_the_prediction(model):
    s = Session()
    digit = s.handle({"op": "digit", "images": [one(), seven()]})["digit"]
    assert digit["images"] == [sum(one(), []), sum(seven(), [])]
    np.testing.assert_allclose(digit["attention"],
                               model.cls_attention(np.array([one(), seven()], dtype=float)),
                               rtol=0, atol=1e-15)
    predicted = model.predict(np.array([one(), seven()], dtype=float))
    assert digit["prediction"].startswith("image 0: %d (softmax " % predicted[0])
    assert "; image 1: %d (softmax " % predicted[1] in digit["prediction"]
    assert digit["edits"] == {"encoder_output": 0, "W_head": 0}


def softmax_rows(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_a_preview_reads_a_drawing_in_progress_and_changes_nothing(model):
    """digit_preview (while the pen is down): the top 3 and the attention of the drawing, with
    the head drawing would give (the edited model head stays, another head is not used)."""
    s = Session()
    before = snapshot(s)
    answer = s.handle({"op": "digit_preview", "images": [seven()]})
    check_answer(answer)
    assert set(answer) == {"ok", "digit_preview"}          # no section of the pipeline
    after = snapshot(s)
    assert after[0] == before[0] and (after[1] == before[1]).all()
    images = np.array([seven()], dtype=float)
    probs = softmax_rows(head(model.encode(images), model.W_head))[0]
    order = np.argsort(-probs)[:3]
    preview = answer["digit_preview"]
    assert [name for name, _ in preview["top"]] == [str(c) for c in order]
    np.testing.assert_allclose([p for _, p in preview["top"]], probs[order], atol=1e-12)
    assert preview["prediction"] == "%d (softmax %.3f)" % (order[0], probs[order[0]])
    np.testing.assert_allclose(preview["attention"], model.cls_attention(images)[0], atol=1e-15)
    # after drawing, the full answer lists the same top 3
    digit = s.handle({"op": "digit", "images": [seven()]})["digit"]
    assert digit["top"] == preview["top"] and digit["prediction"] == preview["prediction"]
    # with W_head edited, the preview reads with the edited head, as drawing again would
    s.handle({"op": "edit", "key": "W_head", "index": [0, int(order[0])], "text": "-40"})
    W = model.W_head.copy()
    W[0, order[0]] = -40
    edited = softmax_rows(head(model.encode(images), W))[0]
    assert int(edited.argmax()) != order[0]
    top = s.handle({"op": "digit_preview", "images": [seven()]})["digit_preview"]["top"]
    assert top[0] == [str(int(edited.argmax())), pytest.approx(edited.max(), abs=1e-12)]
    assert s.handle({"op": "digit_preview", "images": [[[17] * 8] * 8]})["ok"] is False


def test_the_link_carries_pixels_and_gives_the_same_state_back(model):
    s = Session()
    fragment = s.handle({"op": "digit", "images": [seven()]})["link"]["fragment"]
    assert len(fragment) < 600                          # pixels, not 864 numbers
    obj = json.loads(unquote(fragment[len("state="):]))
    assert obj["encoder_output"]["preset"] == "tiny-vit"
    assert obj["encoder_output"]["digits"] == ["".join("0123456789abcdefg"[v] for v in
                                                       sum(seven(), []))]
    assert obj["W_head"] == {"preset": "tiny-vit", "shape": [32, 10], "edits": []}
    back = Session()
    answer = back.handle({"op": "load", "fragment": "#" + fragment})
    assert answer["error"] is None and back.state == s.state
    assert answer["digit"]["images"] == [sum(seven(), [])]


def test_edits_are_kept_in_the_link_and_drawing_again_keeps_the_heads_edits(model):
    s = Session()
    s.handle({"op": "digit", "images": [one()]})
    s.handle({"op": "edit", "key": "W_head", "index": [5, 1], "text": "0", "commit": True})
    answer = s.handle({"op": "edit", "key": "encoder_output", "index": [0, 0, 3], "text": "2.5",
                       "commit": True})
    assert answer["digit"]["edits"] == {"encoder_output": 1, "W_head": 1}
    W = model.W_head.copy()
    W[5, 1] = 0.0
    z_L = model.encode(np.array([one()], dtype=float))
    z_L[0, 0, 3] = 2.5
    np.testing.assert_allclose(s.trace.logits, head(z_L, W), atol=1e-12)
    assert decode_fragment(encode_fragment(s.state)) == s.state
    # drawing again encodes the new image (its edits go) and keeps the edited head
    s.handle({"op": "digit", "images": [seven()]})
    np.testing.assert_array_equal(s.state.encoder_output,
                                  model.encode(np.array([seven()], dtype=float)))
    np.testing.assert_array_equal(s.state.W_head, W)
    # until the trained head is asked for
    answer = s.handle({"op": "digit", "images": [seven()], "head": "trained"})
    np.testing.assert_array_equal(s.state.W_head, model.W_head)
    assert answer["digit"]["edits"] == {"encoder_output": 0, "W_head": 0}


@pytest.mark.parametrize("images, words", [
    ([[[0] * 8] * 7 + [[0] * 7 + [17]]], "images[0][7][7] must be a whole number from 0 to 16"),
    ([[[0] * 8] * 7 + [[0] * 7 + [2.5]]], "images[0][7][7] must be a whole number"),
    ([[[0] * 8] * 7 + [[0] * 7 + [True]]], "got true"),
    ([[[0] * 8] * 7 + [[0] * 7 + [float("nan")]]], "got NaN"),
    ([[[0] * 8] * 7], "images[0] must be 8 rows of 8 pixels"),
    ([[[0] * 8] * 8] * 17, "a list of 1 to 16 images"),
    ([], "a list of 1 to 16 images"),
    (None, "got null"),
])
def test_a_refused_drawing_changes_nothing(images, words):
    s = Session()
    s.handle({"op": "digit", "images": [one()]})
    s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "1", "commit": True})
    before, link = snapshot(s), s.link()
    answer = s.handle({"op": "digit", "images": images})
    check_answer(answer)
    assert answer["ok"] is False and words in answer["error"]["message"]
    after = snapshot(s)
    assert after[0] == before[0] and after[3] == before[3]
    np.testing.assert_array_equal(after[1], before[1])
    np.testing.assert_array_equal(after[2], before[2])
    assert s.link() == link


def test_an_unknown_head_choice_is_refused():
    answer = Session().handle({"op": "digit", "images": [one()], "head": "random"})
    assert answer["ok"] is False and "head must be" in answer["error"]["message"]


def test_leaving_the_mode_hides_the_drawing_and_the_head_keeps_its_digit_names():
    s = Session()
    s.handle({"op": "digit", "images": [one()]})
    answer = s.handle({"op": "mode", "mode": "cls"})
    assert answer["digit"]["images"] is None
    assert "labels" not in answer            # unchanged: still the model's W_head, "0".."9"
    assert answer["logits_table"]["header"][1:3] == ["0", "1"]
    answer = s.handle({"op": "preset", "name": "worked"})
    assert answer["labels"]["classes"] == ["class 0", "class 1", "class 2"]
    assert "digit" not in answer or answer["digit"]["images"] is None


def test_a_resized_digit_state_still_links_and_loads():
    s = Session()
    s.handle({"op": "digit", "images": [one()]})
    answer = s.handle({"op": "resize", "B": 1, "D": 32, "C": 12, "N1": 17})
    assert answer["ok"] and answer["labels"]["classes"][-1] == "class 11"
    back = Session()
    assert back.handle({"op": "load", "fragment": "#" + answer["link"]["fragment"]})["error"] is None
    assert back.state == s.state


@pytest.mark.parametrize("change, words", [
    ({"W_head": {"preset": "tiny-vit", "shape": [32, 10], "digits": ["0" * 64]}},
     "the model's W_head (no digits)"),
    ({"encoder_output": {"preset": "tiny-vit", "shape": [1, 17, 32]}}, "with digits"),
    ({"encoder_output": {"preset": "tiny-vit", "shape": [1, 17, 32], "digits": ["0" * 63]}},
     "digits[0] must be 64 pixel characters"),
    ({"encoder_output": {"preset": "tiny-vit", "shape": [1, 17, 32], "digits": ["h" * 64]}},
     "holds 'h'"),
    ({"encoder_output": {"preset": "tiny-vit", "shape": [2, 17, 32], "digits": ["0" * 64]}},
     "1 digits but shape"),
    ({"W_head": {"preset": "tiny-vit", "shape": [10, 32]}}, "has shape [32, 10]"),
])
def test_a_hand_made_link_that_is_wrong_says_why(change, words):
    obj = {"W_head": {"preset": "tiny-vit", "shape": [32, 10]},
           "encoder_output": {"preset": "tiny-vit", "shape": [1, 17, 32], "digits": ["0" * 64]}}
    obj.update(change)
    s = Session()
    answer = s.handle({"op": "load", "fragment": "#state=" + json.dumps(obj)})
    assert answer["ok"] and words in answer["error"]["message"]
    assert s.state.mode == "cls" and s.state.B == 2            # the worked example instead


def test_the_numpy_export_of_a_drawing_runs_without_pycore(model):
    s = Session()
    s.handle({"op": "digit", "images": [one(), seven()]})
    namespace = {}
    exec(numpy_code(s.state).replace("print(logits)", ""), namespace)
    np.testing.assert_allclose(namespace["logits"], s.trace.logits, atol=1e-12)


def test_the_walk_through_and_the_top_k_name_their_classes_in_words(model):
    """In digit mode the walk-through's titles say "digit 7", never a bare
    "sample 0, 7"; the ViT-B/16 preset's top-k caption says its numbers are random."""
    s = Session()
    s.handle({"op": "digit", "images": [seven()]})
    logits = head(np.array(s.state.encoder_output), np.array(s.state.W_head))
    predicted = int(np.argmax(logits[0]))
    titles = [s.handle({"op": "option", "name": "walk", "value": k})["walk"]["title"] for k in (4, 6)]
    assert titles == ["Step 5 of 7: one dot product: sample 0, digit %d" % predicted,
                      "Step 7 of 7: the prediction for sample 0: digit %d" % predicted]
    caption = s.handle({"op": "preset", "name": "vit-b16", "seed": 0})["top_k"]["caption"]
    assert "Random numbers, not a trained model" in caption
    assert "Random numbers" not in Session().handle(
        {"op": "resize", "B": 2, "D": 4, "C": 30})["top_k"]["caption"]


def test_the_panels_top_classes_rank_as_the_heads_prediction():
    """The panel's top 3 come from the head's one ranking (vit/readout.py top_k): most likely
    first, the first of equal probabilities first, NaN last."""
    from pycore.explorer.digits.mode import top_classes
    names = list("abcde")
    probs = np.array([0.2, 0.3, 0.2, np.nan, 0.3])
    assert top_classes(probs, names) == [["b", 0.3], ["e", 0.3], ["a", 0.2]]
    assert top_classes(np.array([0.5, 0.5]), names[:2]) == [["a", 0.5], ["b", 0.5]]
    assert top_classes(probs, names)[0][0] == names[int(np.nanargmax(probs))]


# ---- the head at every depth (the logit lens) ---------------------------------------------------

def test_the_logit_lens_is_the_head_on_each_depths_cls_row_of_an_independent_forward_pass(model):
    from reference import reference_head
    from reference_vit import reference_encode

    images = np.array([one(), seven()], dtype=float)
    _, _, hidden = reference_encode(model.params, images, model.patch_size, model.heads)
    s = Session()
    answer = s.handle({"op": "digit", "images": [one(), seven()]})
    spec = answer["heatmaps"]["heatmap-lens"]
    assert spec["matrix"] == "lens" and "image 0" in spec["title"]

    def expected(b, W):
        rows = [reference_head(hidden[l, b:b + 1], W)[0] for l in range(model.L)]
        return np.array(rows + [s.matrix("logits")[b]])          # row L: the pipeline's
    lens = s.matrix("lens")
    assert lens.shape == (model.L + 1, 10)
    np.testing.assert_allclose(lens, expected(0, model.W_head), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(lens[-1], reference_head(hidden[-1, :1], model.W_head)[0],
                               rtol=1e-10, atol=1e-10)            # z_L's CLS row, unedited
    # every edit of W_head reaches every depth
    answer = s.handle({"op": "edit", "key": "W_head", "index": [3, 7], "text": "2.5",
                       "commit": True})
    assert "heatmap-lens" in answer["heatmaps"]
    W = model.W_head.copy()
    W[3, 7] = 2.5
    np.testing.assert_allclose(s.matrix("lens"), expected(0, W), rtol=1e-10, atol=1e-10)
    # the sample chosen for the equations
    answer = s.handle({"op": "option", "name": "sample", "value": 1})
    assert "image 1" in answer["heatmaps"]["heatmap-lens"]["title"]
    np.testing.assert_allclose(s.matrix("lens"), expected(1, W), rtol=1e-10, atol=1e-10)
    # an edit of z_L's CLS row shows in the last row alone (the rows above come from the image)
    before = s.matrix("lens").copy()
    s.handle({"op": "edit", "key": "encoder_output", "index": [1, 0, 5], "text": "9",
              "commit": True})
    after = s.matrix("lens")
    np.testing.assert_array_equal(after[:-1], before[:-1])
    assert not np.allclose(after[-1], before[-1])
    np.testing.assert_allclose(after[-1], s.matrix("logits")[1], rtol=0, atol=0)


def test_outside_the_tiny_vits_state_the_lens_is_hidden():
    s = Session()
    answer = s.handle({"op": "load", "fragment": ""})
    assert "heatmap-lens" in answer["hide"] and "heatmap-lens" not in answer["heatmaps"]
