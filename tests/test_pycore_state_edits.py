"""The explorer state (pycore.explorer): its editing helpers (cells, pasted blocks, resizes,
modes), limits, presets and exports."""
import csv
import contextlib
import io
import json

import numpy as np
import pytest

from pycore.explorer.errors import StateError
from pycore.explorer.export.files import logits_csv, numpy_code, state_json_text
from pycore.explorer.state.explorer_state import LIMITS, check_limits
from pycore.explorer import (ExplorerState, default_state, paste_block, preset, resize, set_cell,
                             set_mode, state_from_json)
from reference import WORKED_LOGITS

from state_kit import same, logits


# ---- editing -------------------------------------------------------------------------

def test_set_cell_changes_one_value_in_place_without_copying():
    s = default_state()
    W = s.W_head
    assert set_cell(s, "W_head", [3, 1], " \u22120.25 ") is s
    assert s.W_head is W and W[3, 1] == -0.25
    set_cell(s, "cls", (0, 0), "1e-3")
    assert s.cls[0, 0] == 0.001


@pytest.mark.parametrize("key, index, text, message, err_key, err_index", [
    ("W_head", (3, 1), "abc", "W_head[3,1]: 'abc' is not a number", "W_head", (3, 1)),
    ("cls", [0, 2], "1,5", "cls[0,2]: use a dot for decimals: 1.5 not 1,5", "cls", (0, 2)),
    ("W_head", (4, 0), "1", "W_head[4,0] is outside W_head, which is 4 × 3 (D × C)", "W_head",
     (4, 0)),
    ("W_head", (-1, 0), "1", "W_head[-1,0] is outside W_head", "W_head", (-1, 0)),
    ("W_head", (0,), "1", "W_head needs an index of 2 whole numbers (D × C); got (0,)", "W_head",
     None),
    ("W_head", (0, True), "1", "W_head needs an index of 2 whole numbers", "W_head", None),
    ("W_head", "0,1", "1", "W_head needs an index of 2 whole numbers", "W_head", None),
    ("bias", (0,), "1", "there is no matrix 'bias' to edit", None, None),
    ("encoder_output", (0, 0, 0), "1", "this state holds cls (B × D), not encoder_output: "
                                       "switch mode first", "encoder_output", None),
])
def test_set_cell_errors_leave_the_state_unchanged(key, index, text, message, err_key,
                                                   err_index):
    s = default_state()
    before = s.copy()
    with pytest.raises(StateError) as info:
        set_cell(s, key, index, text)
    assert message in str(info.value)
    assert (info.value.key, info.value.index) == (err_key, err_index)
    same(s, before)


def test_paste_block_writes_a_region_or_refuses_with_sizes():
    s = default_state()
    paste_block(s, "W_head", (1, 1), "1\t2\n3\t4\n")
    np.testing.assert_array_equal(s.W_head[1:3, 1:3], [[1, 2], [3, 4]])
    before = s.copy()
    with pytest.raises(StateError) as info:
        paste_block(s, "W_head", (2, 1), "1 2 3\n4 5 6")
    assert str(info.value) == ("the pasted block is 2 × 3 but from W_head[2,1] only 2 × 2 cells "
                               "fit (W_head is 4 × 3): nothing was pasted; paste a smaller "
                               "block or resize first")
    with pytest.raises(StateError) as info:
        paste_block(s, "W_head", (1, 0), "1 2\n3 x")
    assert "W_head[1,0]" in str(info.value) and "row 2, column 2: 'x' is not a number" in str(
        info.value)
    assert info.value.index == (2, 1) and info.value.key == "W_head"
    with pytest.raises(StateError, match="row 2 has 1 value but row 1 has 2"):
        paste_block(s, "W_head", (0, 0), "1 2\n3")
    same(s, before)


def test_paste_into_encoder_output_goes_along_tokens_and_features():
    s = preset("encoder")
    paste_block(s, "encoder_output", (1, 2, 1), "[[7, 8], [9, 10]]")
    np.testing.assert_array_equal(s.encoder_output[1, 2:4, 1:3], [[7, 8], [9, 10]])


def test_resize_keeps_overlap_fills_zeros_and_clamps_options():
    s = default_state()
    s.options["sample"], s.options["logit_class"] = 1, 2
    resize(s, B=3, D=5, C=2)
    assert s.cls.shape == (3, 5) and s.W_head.shape == (5, 2)
    np.testing.assert_array_equal(s.cls[:2, :4], default_state().cls)
    assert not s.cls[2].any() and not s.cls[:, 4].any() and not s.W_head[4].any()
    assert s.options["logit_class"] == 1
    resize(s, B=1)
    assert s.options["sample"] == 0
    W = s.W_head
    resize(s)                                               # nothing changes, nothing copied
    assert s.W_head is W


@pytest.mark.parametrize("kwargs, key, message", [
    ({"B": 65}, "B", "B = 65 is over the limit of 64 samples"),
    ({"C": 0}, "C", "C = 0 is too small: at least 1"),
    ({"D": 1025}, "D", "D = 1025 is over the limit of 1024"),
    ({"C": 2.5}, "C", "C must be a whole number; got 2.5"),
    ({"B": True}, "B", "B must be a whole number; got true"),
    ({"N": 3}, "N1", "N (the number of patch tokens) exists in encoder mode only"),
])
def test_resize_errors(kwargs, key, message):
    s = default_state()
    with pytest.raises(StateError) as info:
        resize(s, **kwargs)
    assert message in str(info.value) and info.value.key == key
    same(s, default_state())


def test_resize_encoder_tokens():
    s = preset("encoder")
    resize(s, N=1)
    assert s.encoder_output.shape == (2, 2, 4)
    with pytest.raises(StateError, match="N1 = 258 is over the limit of 257"):
        resize(s, N=257)


def test_set_mode_round_trip_keeps_position_0():
    s = default_state()
    set_mode(s, "encoder")
    assert s.mode == "encoder" and s.encoder_output.shape == (2, 5, 4)
    np.testing.assert_array_equal(s.encoder_output[:, 0, :], default_state().cls)
    assert np.round(logits(s), 4).tolist() == WORKED_LOGITS
    patches = s.encoder_output[:, 1:, :].copy()
    set_mode(s, "cls")
    same(s, default_state())
    set_mode(s, "encoder")
    np.testing.assert_array_equal(s.encoder_output[:, 1:, :], patches)   # seeded
    with pytest.raises(StateError, match="mode must be \"cls\" or \"encoder\""):
        set_mode(s, "tokens")


def test_limits_checker():
    assert LIMITS == {"B": 64, "N1": 257, "D": 1024, "C": 1000}
    check_limits(B=64, N1=257, D=1024, C=1000)
    with pytest.raises(StateError) as info:
        check_limits(C=1001)
    assert str(info.value) == "C = 1001 is over the limit of 1000 classes (columns of W_head)"
    assert info.value.key == "C"


# ---- presets ---------------------------------------------------------------------------

def test_presets_are_reproducible_and_seeded():
    for name in ("worked", "random", "vit-b16", "encoder"):
        same(preset(name, seed=11), preset(name, seed=11))
    assert not np.array_equal(preset("random", 1).cls, preset("random", 2).cls)
    r = preset("random")
    assert (r.B, r.D, r.C) == (2, 6, 4)
    # RandomState(0)'s normal stream starts 1.764, 0.400, 0.979, 2.241, 1.868, -0.977 in
    # every NumPy version; the random preset shows them with one decimal.
    assert r.cls[0].tolist() == [1.8, 0.4, 1.0, 2.2, 1.9, -1.0]
    assert np.array_equal(np.round(r.W_head, 1), r.W_head)
    v = preset("vit-b16")
    assert (v.mode, v.B, v.D, v.C) == ("cls", 2, 768, 1000)
    assert abs(float(v.W_head.std()) - 0.02) < 0.001
    with pytest.raises(StateError, match="unknown preset 'vit-l16': choose worked, random"):
        preset("vit-l16")
    with pytest.raises(StateError, match="seed must be a whole number"):
        preset("random", seed=-1)


# ---- exports ---------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    default_state, lambda: preset("encoder", 2), lambda: preset("random", 4),
    lambda: resize(set_cell(preset("vit-b16"), "W_head", (3, 4), "9"), C=12),
    lambda: resize(default_state(), D=40, C=50)])
def test_numpy_code_runs_and_reproduces_the_logits(make):
    s = make()
    code = numpy_code(s)
    assert code.startswith("# The ViT classification head") and "import numpy as np" in code
    assert "print(logits)" in code and "eps=1e-6" in code
    namespace, out = {}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<export>", "exec"), namespace)
    np.testing.assert_allclose(namespace["logits"], logits(s), rtol=1e-12, atol=1e-12)
    assert out.getvalue().strip()
    assert len(code) < 60000


def test_numpy_code_writes_full_precision():
    s = ExplorerState([[0.1 + 0.2], [1 / 3]], cls=[[1e-300, -2.5]])
    code = numpy_code(s)
    assert "0.30000000000000004" in code and "0.3333333333333333" in code and "1e-300" in code


def test_logits_csv():
    values = np.array([[0.1 + 0.2, -1.0], [1 / 3, 2.5e-17]])
    text = logits_csv(values)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["sample", "class_0", "class_1"]
    assert rows[1][0] == "0" and rows[1][1] == "0.30000000000000004"
    np.testing.assert_array_equal([[float(v) for v in r[1:]] for r in rows[1:]], values)


def test_state_json_text_is_pretty_and_reads_back():
    text = state_json_text(default_state())
    assert text.splitlines()[:3] == ["{", '  "W_head": [', "    [0.5,-0.2,0.1],"]
    same(state_from_json(json.loads(text)), default_state())
    big = preset("vit-b16")
    assert len(state_json_text(big)) < 40000
    same(state_from_json(json.loads(state_json_text(big))), big)


def test_editing_tolerates_options_the_page_set_badly():
    s = default_state()
    s.options.update(sample="x", logit_class=None, seed=-3)
    resize(s, B=3)
    set_mode(s, "encoder")
    assert s.options["sample"] == 0 and s.options["logit_class"] == 0
    seeded_0 = set_mode(resize(default_state(), B=3), "encoder").encoder_output
    np.testing.assert_array_equal(s.encoder_output, seeded_0)     # a bad seed counts as 0
