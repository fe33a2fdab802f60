"""The audit's worst files and pastes in the page, on both hosts (Pyodide 314 and the 0.17
fallback): each file, chosen in the real file chooser, is refused in words that name it, within
seconds, and changes nothing shown (heatmaps, link); each paste is answered; afterwards the page
still edits and still loads a good file, whose logits are NumPy's written out here. (Every bad
file's words and bounds in CPython: tests/test_model_file_refusals.py; time and memory in the
page: benchmarks/hostile_bench.py.)"""
import io
import json
import struct
import zipfile

import numpy as np
import pytest

from model_files import npy_bytes, npz_bytes, page_head
from test_model_file_refusals import CASES, Cases, end_record_says
from .pagekit import act, alert_text, heatmap_z, open_explorer, page_fragment
from .test_page_edit import paste
from .test_page_model_file import choose

pytestmark = [pytest.mark.browser]

RNG = np.random.RandomState(49)
W, CLS = RNG.standard_normal((8, 5)), RNG.standard_normal((3, 8))


def many_members(n):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("W_head.npy", npy_bytes(W))
        for i in range(n):
            z.writestr("m%d" % i, b"")
    return out.getvalue()


def many_tensors(n):
    header = json.dumps({"t%d" % i: {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
                         for i in range(n)}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * (4 * n)


# name: (file name, bytes, words the alert must hold); bytes made when first read (Cases)
WORST = Cases({name: (file_name, data, words[0]) for name in (
    "empty .npz", "npz member's npy v2 header claims 2 GB", "bzip2 member (a bz2 bomb)",
    "class_names of 2 GB strings", "safetensors header nested 2,000 deep", "zip bomb, lying size",
    "zip version 10.9 needed", "safetensors dtype a list")
    for file_name, data, _, words in [CASES.unmade(name)]})
WORST.update({
    "an npz of 100,000 members": ("many.npz", lambda: many_members(100000),
                                  "lists 65,535 or more members; the page reads archives of at most 4,096"),
    "a ZIP64 count": ("zip64.npz", end_record_says(npz_bytes(W_head=W, cls=CLS), members=0xFFFF),
                      "lists 65,535 or more members"),
    "safetensors of 250,000 tensors": ("many.safetensors", lambda: many_tensors(250000),
                                       "its header claims 19,"),
})

PASTES = {  # text: what the alert says (None: pasted, no alert)
    "\n" * 1000000 + "1\t2": None,
    ("1.25\t" * 999 + "1.25\n") * 200: "the pasted block is 200 \u00d7 1,000 but from cls[0,0] only 2",
}


@pytest.mark.hosts("pyscript", "fallback")
def test_the_worst_files_and_pastes_are_refused_and_the_page_goes_on(page, site_url, tmp_path):
    open_explorer(page, site_url)
    before = {k: heatmap_z(page, k).tolist() for k in ("heatmap-w", "heatmap-cls", "heatmap-logits")}
    link = page_fragment(page)
    for label, (name, data, words) in WORST.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert choose(page, path) == "refused", (label, alert_text(page))  # how soon: hostile_bench.py
        said = alert_text(page)
        assert said.startswith(repr(name) + ": ") and words in said, (label, said)
        assert "Internal error" not in said
        assert {k: heatmap_z(page, k).tolist() for k in before} == before, label
        assert page_fragment(page) == link
    for text, words in PASTES.items():
        page.get_by_label("cls[0,0]", exact=True).click()
        if words is None:
            act(page, lambda: paste(page, "cls[0,0]", text))
            assert heatmap_z(page, "heatmap-cls")[0, :2].tolist() == [1, 2]
        else:
            paste(page, "cls[0,0]", text)
            page.wait_for_function("() => !document.getElementById('alert').hidden")
            assert words in alert_text(page)
    # the page still loads a good file, and shows its numbers
    path = tmp_path / "good.npz"
    np.savez(str(path), W_head=W, cls=CLS)
    assert act(page, lambda: choose(page, path)) is None
    assert page.evaluate("() => document.documentElement.dataset.modelFile") == "loaded", alert_text(page)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), W)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), page_head(CLS, W), rtol=0, atol=1e-12)
