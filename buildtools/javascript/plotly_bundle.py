"""A Plotly.js with heatmaps only, bundled from pinned npm sources (artifacts.json "plotly_bundle").

The page draws nothing but heatmaps. Plotly's smallest official bundle with them (cartesian) also
registers bars, boxes, histograms, contours, violins, images, pies and world calendars: in a bare
page it evaluates in a median of 786 ms, against 320 ms for core + heatmap alone (8 cold loads
each). That evaluation runs on the main thread while Python boots, so it is paid in every boot.

The bundle is made with esbuild's native binary (its npm platform package: no Node.js needed)
from the 21 packages the bundle contains, each pinned by version and sha512 like every other
artifact. esbuild gives the same bytes every time, so the output is pinned by sha256 too (and
the licences file made beside it, by `licenses_sha256`), and is
kept in the cache: a later build (or an --offline one) reuses it, with a record (cache.STAMP) of
each file's sha256, against which every copy into a site is checked; a damaged copy in the cache
is bundled again. Where no pinned esbuild binary runs (another platform), or anything here
fails, the build says why and uses the official cartesian bundle instead (artifacts.json
"npm.plotly").
"""
import os
import platform
import subprocess
import tarfile
import tempfile

from ..artifacts import atomic
from ..artifacts.checked import discard, remove_stale, sha256_hex
from ..errors import BuildError
from ..artifacts.manifest import NpmArtifact
from ..artifacts.unpacked import copy_files, extract_selection, read_stamp, write_stamp

FILE_NAME = "plotly-heatmap.min.js"
LICENSES = "THIRD-PARTY-LICENSES.txt"
ENTRY = ("var Plotly = require('plotly.js/lib/core');\n"
         "Plotly.register([require('plotly.js/lib/heatmap')]);\n"
         "module.exports = Plotly;\n")
# Plotly's own esbuild settings (its esbuild-config.js), minified.
ESBUILD_ARGS = ["--bundle", "--minify", "--format=iife", "--global-name=Plotly",
                "--define:global=window", "--define:define.amd=false",
                "--alias:stream=stream-browserify", "--target=es2016", "--log-level=warning"]


def esbuild_platform():
    """The npm platform name of this machine as esbuild spells it, e.g. "linux-x64"."""
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower())
    system = {"linux": "linux", "darwin": "darwin", "windows": "win32"}.get(
        platform.system().lower(), platform.system().lower())
    return "%s-%s" % (system, machine)


def _artifact(entry, name):
    """The pinned package as an artifact whose selection is all of it."""
    return NpmArtifact(name=name, package=entry["package"], version=entry["version"],
                       integrity=entry["integrity"], dest="", files=["*"],
                       license=entry.get("license", ""))


def _unpack(cache, entry, name, dest):
    art = _artifact(entry, name)
    extract_selection(cache.npm_tarball(art), art, dest)


def _licenses(modules, packages):
    """Every bundled package's licence text, one after the other."""
    parts = []
    for entry in packages:
        folder = os.path.join(modules, *entry["package"].split("/"))
        texts = sorted(n for n in os.listdir(folder)
                       if n.upper().startswith(("LICENSE", "LICENCE")))
        body = ""
        if texts:
            with open(os.path.join(folder, texts[0]), encoding="utf-8", errors="replace") as f:
                body = f.read().strip()
        body = body or ("(the package ships no licence file; its package.json says %s)"
                        % entry.get("license", "?"))
        parts.append("%s %s (%s)\n%s\n%s" % (entry["package"], entry["version"],
                                            entry.get("license", "?"), "=" * 72, body))
    return "\n\n\n".join(parts) + "\n"


def esbuild_executable(spec, cache, work):
    """The pinned esbuild binary of this platform, unpacked from the cache into `work`."""
    key = esbuild_platform()
    binary = (spec or {}).get("esbuild", {}).get(key)
    if binary is None:
        raise BuildError("no esbuild binary is pinned for %s" % key,
                         "pin @esbuild/%s in artifacts.json to bundle here" % key)
    tool = os.path.join(work, "esbuild")
    _unpack(cache, binary, "esbuild", tool)
    exe = os.path.join(tool, "bin", "esbuild")
    os.chmod(exe, 0o755)
    return exe


def _make(spec, cache, folder, log):
    """Bundle into `folder` (FILE_NAME and LICENSES); raise BuildError on any failure."""
    binary = spec.get("esbuild", {}).get(esbuild_platform())
    with tempfile.TemporaryDirectory(prefix="plotly-bundle-") as work:
        modules = os.path.join(work, "node_modules")
        for entry in spec["packages"]:
            package_dir = os.path.join(modules, *entry["package"].split("/"))
            _unpack(cache, entry, "plotly-bundle", package_dir)
        exe = esbuild_executable(spec, cache, work)
        with open(os.path.join(work, "entry.js"), "w", encoding="utf-8") as f:
            f.write(ENTRY)
        out = os.path.join(folder, FILE_NAME)
        log("bundling Plotly.js (heatmaps only) with esbuild %s" % binary["version"])
        done = subprocess.run([exe, "entry.js"] + ESBUILD_ARGS + ["--outfile=" + out], cwd=work,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=600)
        if done.returncode != 0:
            raise BuildError("esbuild failed: %s" % done.stderr.strip()[-400:],
                             "check the pinned packages in artifacts.json")
        got = sha256_hex(out)
        if got != spec["sha256"]:
            raise BuildError("the bundle's sha256 is %s, not the pinned %s" % (got, spec["sha256"]),
                             "if you changed a pinned package, paste the new sha256 after "
                             "checking the page's tests pass with it")
        with open(os.path.join(folder, LICENSES), "w", encoding="utf-8") as f:
            f.write(_licenses(modules, spec["packages"]))


def describe(spec):
    """What build-info.json says of the bundle (beside its name and folder)."""
    tool = spec["esbuild"][esbuild_platform()]
    return {"package": "plotly.js (heatmaps only, bundled)", "version": spec["version"],
            "sha256": spec["sha256"], "license": spec.get("license", ""),
            "bundled_with": "%s@%s" % (tool["package"], tool["version"])}


def bundle(spec, cache, log=print):
    """A folder holding FILE_NAME and LICENSES, from the cache or made now; None (and the reason,
    logged) where it cannot be made, so that the caller uses the official bundle.

    Parameters
    ----------
    spec : dict or None
        artifacts.json's "plotly_bundle" entry.
    cache : buildtools.artifacts.cache.Cache
    """
    return _bundle(spec, cache, log)[0]


def _bundle(spec, cache, log, again=None):
    """(folder, records of its files) as bundle() finds or makes it, or (None, None). `again`:
    why the cached one must be made anew (a file in it differs from its record)."""
    if not spec:
        return None, None
    target = os.path.join(cache.root, "bundles", "plotly-heatmap-%s" % spec["sha256"][:16])
    made_from = {"sha256": spec["sha256"]}
    files, why = (None, again) if again else read_stamp(target, made_from)
    if files is not None and not _pinned(spec, files):
        files, why = None, "its record %s does not match the pins" % target
    if files is not None:
        return target, files
    if why:
        log("Plotly.js: bundling again, the cached bundle is not usable: %s" % why)
    parent, tmp = os.path.dirname(target), None
    try:
        os.makedirs(parent, exist_ok=True)
        remove_stale(parent, (".bundle-",))
        tmp = tempfile.mkdtemp(dir=parent, prefix=".bundle-")
        os.chmod(tmp, 0o755)
        _make(spec, cache, tmp, log)
        files = {name: {"sha256": sha256_hex(os.path.join(tmp, name)),
                        "size": os.path.getsize(os.path.join(tmp, name))}
                 for name in (FILE_NAME, LICENSES)}
        if not _pinned(spec, files):  # made from pinned packages, yet not what was pinned
            raise BuildError("the bundle made has sha256 %s and licences %s, not the pinned %s "
                             "and %s" % (files[FILE_NAME]["sha256"], files[LICENSES]["sha256"],
                                         spec["sha256"], spec["licenses_sha256"]),
                             "if you upgraded its packages, paste both into artifacts.json")
        write_stamp(tmp, made_from, files)
        old = atomic.put_in_place(tmp, target, atomic.free_name(parent, ".bundle-old-"))
        if old:
            discard(old)
        return target, files
    except (BuildError, OSError, subprocess.SubprocessError, tarfile.TarError) as exc:
        log("Plotly.js: using the official cartesian bundle (%s)" % exc)
        return None, None
    finally:
        if tmp:
            discard(tmp)


def _pinned(spec, files):
    """Whether a bundle's records are exactly the pinned bundle and licences (artifacts.json's
    plotly_bundle ``sha256`` and ``licenses_sha256``): what is copied into a site is checked
    against these records, so each shipped file is checked against its pin."""
    return (set(files) == {FILE_NAME, LICENSES}
            and files[FILE_NAME]["sha256"] == spec["sha256"]
            and files[LICENSES]["sha256"] == spec.get("licenses_sha256"))


def vendor(spec, cache, dest, log=print):
    """Copy the heatmap bundle and its licences into the folder dest, each hashed on its way and
    compared with its record (the bundle's is its pin); returns what build-info.json says of it,
    or None (the reason logged) where it cannot be made, so that the official bundle is used.

    A cached bundle whose files differ from their record is made again, once; a second miss stops
    the build, since the cache's disk or something writing there is at fault.
    """
    folder, files = _bundle(spec, cache, log)
    if folder is None:
        return None
    bad = copy_files(folder, files, dest)
    if bad:
        where = os.path.join(folder, bad[0])
        folder, files = _bundle(spec, cache, log, again="%s %s" % (where, bad[1]))
        if folder is None:
            return None
        bad = copy_files(folder, files, dest)
    if bad:
        raise BuildError("%s %s, even right after bundling it again"
                         % (os.path.join(folder, bad[0]), bad[1]),
                         "something keeps changing the cache folder %s, or its disk is failing: "
                         "delete it and build again" % folder)
    return describe(spec)
