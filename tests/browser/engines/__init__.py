"""The browser engines the page is tested in, behind one API (base.Engine).

    engine = launch("firefox")          # or "chromium" (needs a Playwright), "webkit"
    engine = launch("webkit", dark=True)  # the system in its dark colour scheme
    engine = launch("firefox", forced_colours=True)  # forced colours (Firefox only)
    engine.goto(url); engine.click('[aria-label="cls[0,1]"]'); engine.type_keys("4.5")

tests/browser/engines/kit.py has the page's own helpers (heatmap_z, edit, wait_ready, ...),
written once against this API.
"""
from .base import Engine, EngineError

ENGINES = ("chromium", "firefox", "webkit")
HOSTS = ("pyscript", "fallback")  # the PyScript host, and the Pyodide 0.17 fallback (docs/hosts.md)


def launch(name, playwright=None, dark=False, forced_colours=False):
    """Start engine `name`, its pages in the dark colour scheme if `dark` (as a system set to
    dark mode makes them), in forced colours if `forced_colours` (Firefox only: Chromium's are
    emulated per page through Playwright, WebKitGTK has none); EngineError (saying what to
    install) if it is missing."""
    if forced_colours and name != "firefox":
        raise EngineError("%s: no forced colours through this kit (Firefox only)" % name)
    if name == "chromium":
        from .chromium import Chromium
        if playwright is None:
            raise EngineError("chromium is driven through Playwright: pass its `playwright`")
        return Chromium(playwright, dark=dark)
    if name == "firefox":
        from .firefox import Firefox
        return Firefox(dark=dark, forced_colours=forced_colours)
    if name == "webkit":
        from .webkit import WebKit
        return WebKit(dark=dark)
    raise ValueError("no engine %r (one of %s)" % (name, ", ".join(ENGINES)))


__all__ = ["ENGINES", "HOSTS", "Engine", "EngineError", "launch"]
