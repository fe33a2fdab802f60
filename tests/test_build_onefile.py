"""The one file's build pieces (buildtools/onefile/page.py, gzipped.py) without a browser: Pyodide's
modules made classic scripts, the payload format, the file's policy, the served page's link."""
import base64
import gzip
import hashlib
import json
import os

import pytest

from buildtools.assembly import gzipped
from buildtools.onefile import page as onefile
from buildtools.errors import BuildError


def test_pyodides_modules_become_classic_scripts_that_hand_over_their_exports():
    loader = 'var dt=1,U="314";function f(){return import.meta.url}export{dt as loadPyodide,U as version};\n' \
             "//# sourceMappingURL=pyodide.mjs.map\n"
    text = onefile.classic_script(loader, "pyodide.mjs").decode()
    assert text.endswith("self.vitPyodide={loadPyodide:dt,version:U};\n")
    assert "import.meta" not in text and "sourceMappingURL" not in text
    asm = "async function _createPyodideModule(m){return m}export default _createPyodideModule;"
    assert onefile.classic_script(asm, "pyodide.asm.mjs").decode().endswith(
        "self.vitPyodide.createPyodideModule=_createPyodideModule;")


@pytest.mark.parametrize("text", [
    "var a=1;",                                                     # no export at all
    "export{a as loadPyodide,b as version};export{c as other};",   # a second export statement
    "import{x}from'./y.js';export{a as loadPyodide,b as version};",  # a static import
])
def test_a_module_of_another_shape_fails_the_build(text):
    with pytest.raises(BuildError):
        onefile.classic_script(text, "pyodide.mjs")


def test_a_payload_holds_its_files_after_an_index_line():
    files = {"b.bin": bytes(range(256)) * 3, "a.json": b'{"x": 1}', "empty": b""}
    packed = onefile._pack(files)
    newline = packed.index(b"\n")
    body = packed[newline + 1:]
    for name, at, length in json.loads(packed[:newline]):  # what web/boot/onefile*.js read
        assert body[at:at + length] == files[name]
    assert len(body) == sum(len(v) for v in files.values())


def test_the_worker_scripts_checksum_is_fnv1a_of_its_utf16_code_units():
    """FNV-1a's published 32-bit vectors (for ASCII a text's UTF-16 code units are its bytes),
    and a code unit above 255, which only the UTF-16 reading sees whole."""
    assert onefile.fnv1a("") == 0x811C9DC5
    assert onefile.fnv1a("a") == 0xE40C292C
    assert onefile.fnv1a("foobar") == 0xBF9CF968
    h = 0x811C9DC5
    for unit in (0xD7, 0x2192):  # "×→"
        h = ((h ^ unit) * 16777619) % 2 ** 32
    assert onefile.fnv1a("\u00d7\u2192") == h


def test_the_boot_glue_has_the_one_line_the_build_writes_the_facts_into():
    with open(os.path.join(os.path.dirname(__file__), "..", "web", "boot", "onefile.js")) as f:
        assert f.read().count(onefile.FACTS_LINE) == 1


def test_the_files_policy_allows_its_scripts_by_hash_and_fetches_nothing():
    scripts, styles = ["console.log(1)", "var x = 2;"], ["body{color:red}"]
    policy = dict(d.split(" ", 1) for d in onefile.one_file_policy(scripts, styles).split("; "))
    for text in scripts:
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert "'sha256-%s'" % digest in policy["script-src"].split()
    assert "'unsafe-inline'" not in policy["script-src"] and "'unsafe-eval'" not in policy["script-src"]
    assert policy["connect-src"] == "'none'" and policy["default-src"] == "'none'"
    digest = base64.b64encode(hashlib.sha256(styles[0].encode()).digest()).decode()
    assert "'sha256-%s'" % digest in policy["style-src"].split()


def test_the_served_page_links_the_file_with_its_size_or_not_at_all():
    html = "<div>\n  %s\n</div>\n" % onefile.LINK_MARKER
    linked = onefile.with_download_link(html, {"bytes": 12_345_678})
    assert 'href="vit-head-explorer.html" download>Download for offline use</a> (one file, 12.3 MB)' \
        in linked
    assert onefile.with_download_link(html, None) == "<div>\n</div>\n"


def test_gzipped_files_are_replaced_by_their_gz_which_holds_them(tmp_path):
    site = tmp_path / "site"
    (site / "vendor" / "pyodide").mkdir(parents=True)
    (site / "bytecode").mkdir()
    contents = {"vendor/pyodide/pyodide.asm.wasm": b"\0asm" + os.urandom(3000),
                "vendor/pyodide/pyodide-lock.json": b'{"packages": {}}' * 50,
                "vendor/pyodide/python_stdlib.zip": b"Pyodide's own",
                "bytecode/python_stdlib.zip": b"PK" * 4000}
    for url, data in contents.items():
        (site / url).write_bytes(data)
    urls = gzipped.compress(str(site), "vendor/pyodide", "bytecode/python_stdlib.zip")
    assert sorted(urls) == sorted(u for u in contents if u != "vendor/pyodide/python_stdlib.zip")
    for url in urls:
        packed = (site / (url + ".gz")).read_bytes()
        assert gzip.decompress(packed) == contents[url]
        assert gzipped.served_size(str(site / url)) == len(packed)
    gzipped.remove_originals(str(site), urls, "vendor/pyodide")
    left = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    assert left == sorted(u + ".gz" for u in urls)
