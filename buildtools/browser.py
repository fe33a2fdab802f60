"""How the tests and benchmarks start Chromium: its flags, and where a system Chromium lives.

Tests and benchmarks only; the site itself needs nothing of this.
"""

CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    # Chromium (Debian's 156 here) starts a renderer for the address bar's WebUI pop-up with
    # every new browser context, even headless: about 0.35 s of CPU per context on 2 CPUs,
    # taken from the page under test and from the benchmarks' boots. No page needs it.
    "--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup",
]
"""Flags for a headless Chromium that runs the explorer and nothing else."""

SYSTEM_CHROMIUMS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
"""Where a system Chromium is looked for (Debian's `chromium` package first)."""
