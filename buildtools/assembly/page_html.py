"""The page's text as the build fills it in, and the URLs a site's own files load.

web/index.html marks where the host's boot tags go (RUNTIME_MARKER) and where its Content-
Security-Policy goes (CSP_MARKER); absolute_urls finds any URL in the site's own files that is
not relative, which a site served under any path, in an iframe or offline must not have.
"""
import json
import os
import re
from html.parser import HTMLParser

from . import csp
from ..errors import BuildError


RUNTIME_MARKER = "<!--RUNTIME-->"
# Where the page's Content-Security-Policy goes: before anything the page loads, which a
# <meta>-delivered policy does not cover.
CSP_MARKER = "<!--CSP-->"


def substitute_runtime(html, tags):
    """Put the host's tags where index.html has the line <!--RUNTIME--> (exactly once)."""
    count = html.count(RUNTIME_MARKER)
    if count != 1:
        raise BuildError("web/index.html must contain the line %s exactly once (found %d)"
                         % (RUNTIME_MARKER, count),
                         "put %s in <head>, after js/host.js" % RUNTIME_MARKER)
    lines = html.split("\n")
    for i, line in enumerate(lines):
        if RUNTIME_MARKER in line:
            indent = line[:len(line) - len(line.lstrip())]
            lines[i] = "\n".join(indent + t for t in tags.split("\n"))
    return "\n".join(lines)


def substitute_policy(html, policy):
    """Put the policy's <meta http-equiv> where index.html has the line <!--CSP--> (exactly once),
    which must come before every script, stylesheet and style element."""
    count = html.count(CSP_MARKER)
    if count != 1:
        raise BuildError("web/index.html must contain the line %s exactly once (found %d)"
                         % (CSP_MARKER, count),
                         "put %s in <head>, right after <meta charset>" % CSP_MARKER)
    at = html.index(CSP_MARKER)
    first = re.search(r"<(script|link|style)\b", html, re.IGNORECASE)
    if first and first.start() < at:
        raise BuildError("web/index.html has a <%s> before %s, where the page's Content-"
                         "Security-Policy would not cover it" % (first.group(1), CSP_MARKER),
                         "move %s up, right after <meta charset>" % CSP_MARKER)
    return html.replace(CSP_MARKER, csp.meta_tag(policy))


class _Resources(HTMLParser):
    """Collects the URLs an HTML page loads (and every root-absolute one)."""

    LOADING = {("script", "src"), ("img", "src"), ("iframe", "src"), ("source", "src"),
               ("audio", "src"), ("video", "src"), ("embed", "src"), ("object", "data"),
               ("link", "href"), ("script", "config")}

    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if (tag, name) in self.LOADING or name in ("href", "src", "action", "poster"):
                if (tag, name) in self.LOADING or value.startswith("/"):
                    self.urls.append((tag, name, value))


def _is_relative(url):
    return not re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|//|/)", url) or url.startswith(
        ("data:", "blob:", "#"))


def absolute_urls(site, allowed=()):
    """Every URL in the site's own files that is not relative: [(file, url), ...].

    A loaded resource must be relative (no scheme, no '//', no leading '/'), so the site works
    under any path, in an iframe and offline; a plain link (<a href>) may point elsewhere. Only
    our own files are read: vendored libraries mention URLs they never load in this site.
    """
    problems = []
    for dirpath, dirnames, filenames in os.walk(site):
        rel_dir = os.path.relpath(dirpath, site).replace(os.sep, "/")
        if rel_dir == "vendor" or rel_dir.startswith("vendor/"):
            continue
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, site).replace(os.sep, "/")
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            urls = []
            if name.endswith(".html"):
                parser = _Resources()
                parser.feed(text)
                urls = [u for _, _, u in parser.urls]
            elif name.endswith(".css"):
                urls = re.findall(r"url\(\s*['\"]?([^'\")]+)", text)
                urls += re.findall(r"@import\s+['\"]([^'\"]+)", text)
            elif name == "py-files.json":
                urls = [f["url"] for f in json.loads(text)["files"]]
            elif name == "pyscript.json":
                config = json.loads(text)
                urls = [config.get("interpreter", ""),
                        config.get("vit", {}).get("pyodide_index", "")]
                urls += list(config.get("files", {}))
            elif name.endswith((".js", ".mjs")):
                # our boot/app scripts: flag fetch("/...") and import("http...") literals
                urls = re.findall(r"(?:fetch|import)\(\s*['\"`]([^'\"`]+)", text)
                urls += re.findall(r"from\s+['\"]([^'\"]+)['\"]", text)
            for url in urls:
                if not _is_relative(url) and not url.startswith(tuple(allowed)):
                    problems.append((rel, url))
    return problems
