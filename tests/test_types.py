"""The page's JavaScript, type-checked: TypeScript's checker (tsc) over web/js and web/boot.

TypeScript is pinned in artifacts.json (npm "typescript", never part of a site) and fetched by
the build's cache, like axe-core (tests/browser/engines/axe.py): the first run on a machine
downloads it with the npm client. It checks the scripts as they are (allowJs, checkJs, noEmit),
with their JSDoc, the protocol's typedefs (web/js/protocol.js, written by
`python3 -m buildtools.javascript.protocol`) and the declarations in typecheck/ (Plotly.js, KaTeX,
vitHost, Pyodide). Two projects: typecheck/tsconfig.json (the page: DOM) and
typecheck/tsconfig.worker.json (the workers' scripts: WebWorker; js/host.js, a page script
that the workers load too, only as typecheck/host.d.ts declares it); docs/build-and-tests.md ("The
tests") says how strict they are. Any error fails, listed as tsc prints it
(file(line,col): error TSnnnn: ...).

Generated beside the checkout for each run (never committed): js/shared.js, which the build
writes (buildtools/javascript/shared.py) and the page's modules import, and page-ids.d.ts, the element
type of each id in web/index.html, so that document.getElementById("share-dialog") is an
HTMLDialogElement.

By hand: python3 tests/test_types.py   (prints tsc's errors, exits 1 on any)
"""
import functools
import json
import os
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

import pytest
import pinned

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECTS = ("typecheck/tsconfig.json", "typecheck/tsconfig.worker.json")


@functools.lru_cache(maxsize=1)
def tsc():
    """The path of the pinned tsc (lib/tsc.js), from the build's cache or the VIT_HEAD_MIRROR
    mirror; the cache checks the tarball against its integrity and the files against
    files_sha256."""
    sys.path.insert(0, ROOT)
    folder = pinned.unpacked("typescript")
    return os.path.join(folder, "lib", "tsc.js")


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            # a figure's element (class "plot": js/heatmap/draw.js draws it with Plotly)
            plot = "plot" in (attrs.get("class") or "").split()
            self.ids.setdefault(attrs["id"], set()).add("PlotElement" if plot else
                                                        'HTMLElementTagNameMap["%s"]' % tag)


def page_ids_dts(html):
    """page-ids.d.ts for the text of web/index.html: interface PageIds, each id's element type
    (TypeScript's HTMLElementTagNameMap names them by tag; a figure's is typecheck/page.d.ts's
    PlotElement)."""
    parser = _Ids()
    parser.feed(html)
    lines = ["// Written by tests/test_types.py from web/index.html: each id's element.",
             "interface PageIds {"]
    for id_, tags in sorted(parser.ids.items()):
        element = " | ".join(sorted(tags))
        lines.append("  %s: %s;" % (json.dumps(id_), element))
    return "\n".join(lines + ["}", ""])


def write_generated(folder):
    """Write js/shared.js and page-ids.d.ts into `folder`; returns {project: its wrapper}, a
    tsconfig there that extends the project and merges folder/js with web/js (rootDirs), so
    that "./shared.js" resolves; the page's project also gets page-ids.d.ts."""
    sys.path.insert(0, ROOT)
    from buildtools.javascript import shared as shared_js
    os.makedirs(os.path.join(folder, "js"), exist_ok=True)
    with open(os.path.join(folder, "js", "shared.js"), "w", encoding="utf-8") as f:
        f.write(shared_js.module_text(ROOT))
    with open(os.path.join(ROOT, "web", "index.html"), encoding="utf-8") as f:
        ids = page_ids_dts(f.read())
    with open(os.path.join(folder, "page-ids.d.ts"), "w", encoding="utf-8") as f:
        f.write(ids)
    wrappers = {}
    for project in PROJECTS:
        name = os.path.basename(project)
        wrapper = {"extends": os.path.join(ROOT, *project.split("/")),
                   "compilerOptions": {"rootDirs": [os.path.join(ROOT, "web", "js"),
                                                    os.path.join(folder, "js")]}}
        if project == PROJECTS[0]:  # the page's project: its ids
            wrapper["files"] = [os.path.join(folder, "page-ids.d.ts")]
        wrappers[project] = os.path.join(folder, name)
        with open(wrappers[project], "w", encoding="utf-8") as f:
            json.dump(wrapper, f, indent=1)
    return wrappers


def run_tsc(config, *options, cwd=ROOT):
    """(exit code, tsc's output) for the project `config` (with tsc's command-line `options`),
    paths relative to the checkout."""
    done = subprocess.run(["node", tsc(), "-p", config, "--pretty", "false", *options], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, (done.stdout + done.stderr).strip()


def errors(output):
    return [line for line in output.splitlines() if ": error TS" in line]


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    return write_generated(str(tmp_path_factory.mktemp("typecheck")))


@pytest.mark.parametrize("project", PROJECTS)
def test_no_type_errors(projects, project):
    code, output = run_tsc(projects[project])
    found = errors(output)
    assert code == 0 and not found, (
        "tsc found %d error(s) in the project %s (fix the code or its JSDoc; an exception only "
        "with `// @ts-expect-error <why>`):\n%s" % (len(found), project, output))


def test_the_checker_sees_wrong_names_and_counts(projects, tmp_path):
    """The settings catch what they are meant to: a wrong property name on a typed value, a
    call with too many arguments, a missing argument of a function with JSDoc, an id's element
    read as another element, and a protocol field that does not exist."""
    bad = tmp_path / "bad.js"
    bad.write_text(
        'import { setText } from "%s";\n'
        '/** @param {import("%s").Answer} answer */\n'
        "export function f(answer) {\n"
        "  setText(document.body);\n"  # TS2554: setText(el, text) takes 2
        "  setText(document.body, 'x', 3);\n"  # TS2554
        "  document.body.hiden = true;\n"  # TS2551: no such property
        '  document.getElementById("share-dialog").value = "x";\n'  # a dialog has no value
        "  return answer.heatmap;\n"  # TS2551: heatmaps
        "}\n" % (os.path.join(ROOT, "web", "js", "page", "dom.js").replace("\\", "/"),
                 os.path.join(ROOT, "web", "js", "protocol.js").replace("\\", "/")))
    config = tmp_path / "tsconfig.json"
    page = projects[PROJECTS[0]]
    config.write_text(json.dumps({
        "extends": page,
        "include": [os.path.join(ROOT, "typecheck", name) for name in ("page.d.ts", "host.d.ts")],
        "files": [str(bad), os.path.join(os.path.dirname(page), "page-ids.d.ts")]}))
    code, output = run_tsc(str(config))
    found = errors(output)
    lines = sorted(int(e.split("(", 1)[1].split(",")[0]) for e in found if "bad.js" in e)
    assert code != 0 and lines == [4, 5, 6, 7, 8], output


def list_files(config, *options):
    """The scripts and declarations of the project `config` (not TypeScript's own libs), as
    paths relative to the checkout."""
    code, output = run_tsc(config, *options, "--listFilesOnly")
    assert code == 0, output
    return {os.path.relpath(line.strip(), ROOT).replace(os.sep, "/")
            for line in output.splitlines()
            if line.strip() and os.path.dirname(line.strip()) != os.path.dirname(tsc())}


def test_the_workers_project_checks_every_script_it_imports(projects):
    """The workers' project resolves no import to a file of its own (noResolve: host.js, the
    page's script, stays out), so a script a worker imports that "include" does not list would
    be neither checked nor typed (its imports `any`): the only script left out must be host.js,
    which the page's project checks against the one declaration both projects share."""
    worker = projects[PROJECTS[1]]
    checked = list_files(worker)
    imported = list_files(worker, "--noResolve", "false")
    assert imported - checked == {"web/js/host.js"}, sorted(imported - checked)
    assert "web/js/host.js" in list_files(projects[PROJECTS[0]])


def test_the_workers_project_sees_the_boot_kit_as_declared(projects, tmp_path):
    """A worker's call of vitHost.boot is checked against host.d.ts's VitBootTools (a wrong
    argument, a misspelt tool, a missing argument), and a worker has no document."""
    bad = tmp_path / "bad-worker.js"
    bad.write_text(
        'self.vitHost.boot.MB("12");\n'  # TS2345: MB takes a number
        "self.vitHost.boot.sumary(new Error());\n"  # TS2551: summary
        "self.vitHost.boot.forwardViolations();\n"  # TS2554: post is required
        'document.getElementById("x");\n')  # TS2584: no DOM in a worker
    config = tmp_path / "tsconfig.json"
    config.write_text(json.dumps({"extends": projects[PROJECTS[1]], "files": [str(bad)]}))
    code, output = run_tsc(str(config))
    lines = sorted(int(e.split("(", 1)[1].split(",")[0]) for e in errors(output) if "bad-worker.js" in e)
    assert code != 0 and lines == [1, 2, 3, 4], output


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        failed = 0
        for project, wrapper in write_generated(tmp).items():
            code, output = run_tsc(wrapper)
            print("%s: %d error(s)" % (project, len(errors(output))))
            if output:
                print(output)
            failed = failed or code
    sys.exit(1 if failed else 0)
