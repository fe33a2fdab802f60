"""Orca's debug log, read by cause: every utterance Orca sends to speech, with the event
that caused it (a key, a focus moving, a live region, an alert, a changed description)."""
import re

# ---- Orca's log, read by cause ------------------------------------------------------------------

BLOCK_OPEN = re.compile(r"^vvvvv (?:(PRESENT LIVE REGION MESSAGE)|(PROCESS|CONSUME) "
                        r"(?:OBJECT EVENT (\S+)|ATSPI_KEY_\w+: '(.*)' \(\d+\)))\s*vvvvv")
BLOCK_CLOSE = re.compile(r"^\^\^\^\^\^ ")
SPOKEN = re.compile(r"SPEECH OUTPUT: '(.*)'( )?(?:voice=\w+)?\s*\{")
ATTRIBUTES = re.compile(r"^\s+attributes='(.*)'$")
NAME_ROLE = re.compile(r"^\s+app\.name='.*?' name='(.*)' role='([^']*)'$")
LIVE_EVENT = re.compile(r"OBJECT EVENT: object:(text-changed:insert\S*|children-changed:add\S*) \(.*?, (.*)\)$")


class Utterance:
    def __init__(self, text, cause, source=""):
        self.text, self.cause, self.source = text, cause, source

    def __repr__(self):
        return "%-14s %-22s %r" % (self.cause, self.source, self.text)


def read_speech(log_text):
    """The utterances in a stretch of Orca's debug log, each with its cause: 'key' (in a key
    event's block: the key's echo or Orca's own command), 'live region' (in a PRESENT LIVE REGION
    MESSAGE block), 'alert' (an alert presented by its children-changed event), 'description'
    (the focused object's description changed, which Orca says), 'focus' (any
    other object event: a focus or caret moving, text selected), 'other' (outside any block).
    Also the changes of live regions that Orca received and handled as such: (id, text)."""
    said, changes = [], []
    block = None  # {"kind", "what", "id", "name", "role", "live"}
    for line in log_text.splitlines():
        m = BLOCK_OPEN.match(line)
        if m:
            if m.group(1):
                block = {"kind": "live region", "what": "", "id": ""}
            elif m.group(3):
                block = {"kind": "object", "what": m.group(3), "id": "", "event": ""}
            else:  # a key: CONSUME when Orca took it as one of its commands
                block = {"kind": "key", "what": m.group(4) + (" (Orca's command)" if m.group(2) == "CONSUME" else ""),
                         "id": ""}
            continue
        if BLOCK_CLOSE.match(line):
            if block and block.get("live") and block.get("event"):
                changes.append((block["id"], block["event"]))
            block = None
            continue
        if block is not None and block["kind"] == "object":
            m = LIVE_EVENT.search(line)
            if m and not block["event"]:
                block["event"] = m.group(2)
            m = NAME_ROLE.match(line)
            if m and "name" not in block:
                block["name"] = m.group(1)
            m = ATTRIBUTES.match(line)
            if m and not block["id"]:
                ident = re.search(r"(?:^|, )id:([^,]*)", m.group(1))
                block["id"] = "#" + ident.group(1) if ident else ""
            if "WEB: Event to be handled as live region" in line:
                block["live"] = True
            if "WEB: Presenting event.any_data" in line:
                block["alert"] = True
        m = SPOKEN.search(line)
        if not m:
            continue
        text = m.group(1)
        if block is None:
            said.append(Utterance(text, "other"))
        elif block["kind"] == "object" and block.get("alert"):
            said.append(Utterance(text, "alert", block["id"]))
        elif block["kind"] == "object" and block["what"] == "object:property-change:accessible-description":
            said.append(Utterance(text, "description", block.get("name", "")))
        elif block["kind"] == "object":
            said.append(Utterance(text, "focus", "%s %s" % (block["what"], block["id"])))
        else:
            said.append(Utterance(text, block["kind"], block["what"]))
    # a live region's message is attributed to the region whose change holds its text
    for u in said:
        if u.cause == "live region":
            for ident, text in reversed(changes):
                # Orca's log shortens a long text to its start and " (...)"
                text = re.sub(r"^\d+, ", "", text)
                text = text[:-6] if text.endswith(" (...)") else text
                if text and (text in u.text or u.text in text):
                    u.source = ident
                    break
    return said, changes


