"""The page through AT-SPI (its objects by name, a region's text, the focus) and the actions
the check takes on it, each judged: its result said once, nothing else from the page."""
import re
import subprocess
import time

from .speech import read_speech

# ---- the page, through AT-SPI --------------------------------------------------------------------

def document():
    import pyatspi
    for app in pyatspi.Registry.getDesktop(0):
        if app is not None and app.name == "Firefox":
            doc = pyatspi.findDescendant(app, lambda o: o.getRole() == pyatspi.ROLE_DOCUMENT_WEB)
            if doc is not None:
                return doc
    return None


def named(name, role=None):
    """The page's object of accessible name `name` (and role name `role`), or None."""
    import pyatspi
    doc = document()
    if doc is None:
        return None
    return pyatspi.findDescendant(doc, lambda o: o.name == name and (role is None or o.getRoleName() == role))


def region_text(ident):
    """The text of the page's element of id `ident` ('#id'), as Firefox exposes it, or None."""
    import pyatspi
    doc = document()
    if doc is None:
        return None
    attr = "id:" + ident.lstrip("#")

    def has_id(o):
        try:
            return attr in o.getAttributes()
        except Exception:
            return False
    obj = pyatspi.findDescendant(doc, has_id)
    if obj is None:
        return None
    try:
        text = obj.queryText()
        return text.getText(0, -1).replace("\ufffc", "")
    except NotImplementedError:
        return obj.name


def wait_for(find, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        try:
            found = find()
        except Exception:  # the tree changes while it is read
            found = None
        if found is not None:
            return found
        time.sleep(0.5)
    raise RuntimeError("timed out waiting for %s" % what)


def focus(name, role=None):
    """Gives the focus to the page's object `name`; `role` first, any role if none has it."""
    try:
        obj = wait_for(lambda: named(name, role), 10, "%r in the page" % name)
    except RuntimeError:
        if role is None:
            raise
        obj = wait_for(lambda: named(name), 10, "%r in the page" % name)
    obj.queryComponent().grabFocus()


def keys(desktop, *args):
    subprocess.run(["xdotool", *args], env=desktop.env, check=True)


# ---- the actions ---------------------------------------------------------------------------------

# Each action: where the focus goes first, the keys, the live regions whose messages are its
# result (by id), and what the result must say (a regular expression), as the page writes it.
ACTIONS = [
    {"name": "edit: '-1.25' typed in cls[0,0], then Enter",
     "focus": ("cls[0,0]", "entry"), "keys": [("type", "-1.25"), ("key", "Return")],
     "result": ["#prediction-said"], "says": r"^Sample 0 predicts class \d"},
    {"name": "refused: 'abc' typed in cls[0,1], then Enter",
     "focus": ("cls[0,1]", "entry"), "keys": [("type", "abc"), ("key", "Return")],
     "result": ["#alert-said"], "says": r"^cls\[0,1\]: 'abc' is not a number"},
    {"name": "refused: 'abc' typed in cls[1,2], then Tab",
     "focus": ("cls[1,2]", "entry"), "keys": [("type", "abc"), ("key", "Tab")],
     "result": ["#alert-said"], "says": r"^cls\[1,2\]: 'abc' is not a number"},
    {"name": "scrub: Alt+Up 5 times in cls[0,3]",
     "focus": ("cls[0,3]", "entry"), "keys": [("key", "--delay", "150", *["alt+Up"] * 5)],
     "result": ["#grid-input-scrub-said", "#prediction-said"], "says": r"\d", "each": True},
    {"name": "walk-through: started (Enter on its button)",
     "focus": ("Start the walk-through", "push button"), "keys": [("key", "Return")],
     "result": ["#walk-said"], "says": r"^\S"},
    {"name": "walk-through: Next (Enter on Next)",
     "focus": ("Next →", "push button"), "keys": [("key", "Return")],
     "result": ["#walk-said"], "says": r"^\S"},
    {"name": "walk-through: ended (Enter on its button)",
     "focus": ("End the walk-through", "toggle button"), "keys": [("key", "Return")],
     "result": [], "says": None},
    {"name": "fine-tuning: Play (Enter), until it stops",
     "focus": ("Play", "toggle button"), "keys": [("key", "Return")],
     "result": ["#ft-said"], "says": r"\S", "max": 2, "timeout": 90},
    {"name": "drawing pad: 11 keys (arrows, Space, 5, Enter, Delete, 9)",
     "focus": ("pixel 0,0: 0", "table cell"),
     "keys": [("key", "--delay", "250", "Right", "Right", "Down", "space", "Down", "5", "Right",
               "Return", "Delete", "Down", "9")],
     "result": ["#digit-said"], "says": r"\S", "quiet": 10.0, "timeout": 90},
]


def run(desktop, actions, out):
    results = []
    for action in actions:
        name, role = action["focus"]
        start = desktop.log_size()
        focus(name, role)
        desktop.wait_quiet(start, quiet=2.5, timeout=20)
        if role in ("entry", "table cell") and not desktop.focus_mode():
            # Orca enters focus mode by itself when the focus moves to a field; should it not
            # have, Orca's own key for it (Insert+A), as a person would press it
            keys(desktop, "key", "Insert+a")
            desktop.wait_quiet(start, quiet=2.5, timeout=20)
        navigation, _ = read_speech(desktop.log_since(start))
        mark = desktop.log_size()
        for k in action["keys"]:
            if k[0] == "type":
                keys(desktop, "type", "--delay", "150", "--", k[1])
            else:
                keys(desktop, *k)
        settled = desktop.wait_quiet(mark, quiet=action.get("quiet", 5.0), timeout=action.get("timeout", 45))
        said, changes = read_speech(desktop.log_since(mark))
        shown = {ident: region_text(ident) for ident in action["result"]}
        results.append(judge(action, navigation, said, changes, settled, shown, out))
    return results


def judge(action, navigation, said, changes, settled, shown, out):
    page = [u for u in said if u.cause in ("live region", "alert", "description")]
    result = [u for u in page if u.source in action["result"]]
    unrelated = [u for u in page if u.source not in action["result"]]
    most = action.get("max", 1)
    says = action["says"]
    if action.get("each"):  # one result in each region (a scrub: its number, then the prediction)
        most = len(action["result"])
        counted = all(sum(u.source == r for u in result) <= 1 for r in action["result"])
    else:
        counted = True
    # the result the page holds at the end is the one said last
    final = all(not text or any(u.source == ident and (text in u.text or u.text in text) for u in result)
                for ident, text in shown.items())
    ok = (settled and not unrelated and counted and final
          and (len(result) == 0 if says is None else 1 <= len(result) <= most)
          and all(re.search(says, u.text) for u in result if says))
    # a result said twice (the same text) is not once
    texts = [u.text for u in result]
    if len(set(texts)) != len(texts):
        ok = False
    print("\n== %s" % action["name"], file=out)
    print("   before it, moving the focus there, Orca said: %s" % (
        " | ".join(u.text for u in navigation) or "nothing"), file=out)
    for u in said:
        print("   %r" % u, file=out)
    if not said:
        print("   (nothing said)", file=out)
    print("   the page's live regions now hold: %s" % (
        "; ".join("%s %r" % kv for kv in shown.items()) or "-"), file=out)
    print("   live region changes Orca received: %s" % (
        "; ".join("%s %r" % c for c in changes) or "none"), file=out)
    verdict = "OK" if ok else "NOT OK"
    detail = "page announcements: %d of its result (%s), %d unrelated%s%s" % (
        len(result), ", ".join(action["result"]) or "none expected", len(unrelated),
        "" if final else "; the text the page holds now was not said",
        "" if settled else "; speech had not stopped at the time limit")
    print("   %s: %s" % (verdict, detail), file=out)
    return {"action": action["name"], "ok": ok, "said": said, "result": result, "unrelated": unrelated}


