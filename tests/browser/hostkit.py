"""What tests/browser/test_hosts.py and test_host_failures.py share: the worked example they boot,
the boot status they record, and the NumPy wheel the PyScript build pins."""
import os

from buildtools.artifacts import manifest

from .conftest import ROOT

# The worked example (docs/math.md).
CLS = [[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]]
W_HEAD = [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]]

# Records every text the boot status shows (the page replaces its text node each time).
RECORD_STATUS = """
window.__bootTexts = [];
new MutationObserver(function (records) {
  records.forEach(function (r) {
    var el = r.target.nodeType === 1 ? r.target : r.target.parentNode;
    if (!el || el.id !== 'boot-status') return;
    // the text as it was set, not as it is now (several changes can share one callback)
    if (r.type === 'characterData') window.__bootTexts.push(r.target.data);
    else r.addedNodes.forEach(function (n) { window.__bootTexts.push(n.textContent); });
  });
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


WHEEL = manifest.load(os.path.join(ROOT, "artifacts.json")).numpy_wheel.file_name


def boot(page, url, fragment=""):
    """Open the site's page with its boot status recorded (RECORD_STATUS)."""
    page.add_init_script(RECORD_STATUS)
    page.goto(url + "index.html" + fragment)
