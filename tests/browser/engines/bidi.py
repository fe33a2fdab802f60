"""A small WebDriver BiDi client (https://w3c.github.io/webdriver-bidi/) over one WebSocket.

Commands are JSON messages {"id", "method", "params"}; the browser answers each with
{"id", "type": "success", "result"} or {"id", "type": "error", "error", "message"}, and sends
events {"type": "event", "method", "params"} for the modules a session subscribed to.
One thread reads the socket and hands answers to the waiting caller and events to listeners.
"""
import itertools
import json
import threading

import websocket  # PyPI: websocket-client


class BiDiError(Exception):
    """The browser answered a command with an error (or not at all)."""


class BiDiConnection:
    """One WebSocket to a browser's BiDi endpoint, e.g. ws://127.0.0.1:PORT/session."""

    def __init__(self, url, timeout=30.0):
        # Firefox refuses a handshake that names an Origin (a web page is no client of its).
        self.ws = websocket.create_connection(url, timeout=timeout, enable_multithread=True,
                                              suppress_origin=True)
        self.ws.settimeout(None)  # the reader waits as long as it takes
        self._ids = itertools.count(1)
        self._answers = {}
        self._waiting = threading.Condition()
        self._listeners = {}  # event method -> [callback(params)]
        self._closed = None
        self._reader = threading.Thread(target=self._read, name="bidi-reader", daemon=True)
        self._reader.start()

    # ---- the socket ----------------------------------------------------------------------
    def _read(self):
        try:
            while True:
                text = self.ws.recv()
                if not text:
                    raise websocket.WebSocketConnectionClosedException("closed by the browser")
                message = json.loads(text)
                if message.get("type") == "event":
                    for listener in list(self._listeners.get(message["method"], ())):
                        listener(message["params"])
                elif "id" in message and message["id"] is not None:
                    with self._waiting:
                        self._answers[message["id"]] = message
                        self._waiting.notify_all()
        except Exception as e:  # the browser went away: every waiting command fails
            with self._waiting:
                self._closed = e
                self._waiting.notify_all()

    def command(self, method, params=None, timeout=130.0):
        """Send a command and return its result; BiDiError on an error answer or a timeout."""
        number = next(self._ids)
        with self._waiting:
            if self._closed:
                raise BiDiError("%s: the connection is closed (%s)" % (method, self._closed))
        self.ws.send(json.dumps({"id": number, "method": method, "params": params or {}}))
        with self._waiting:
            if not self._waiting.wait_for(lambda: number in self._answers or self._closed,
                                          timeout):
                raise BiDiError("%s: no answer in %.0f s" % (method, timeout))
            if number not in self._answers:
                raise BiDiError("%s: the connection closed (%s)" % (method, self._closed))
            answer = self._answers.pop(number)
        if answer.get("type") == "error":
            raise BiDiError("%s: %s: %s" % (method, answer.get("error"), answer.get("message")))
        return answer.get("result", {})

    def on(self, event, listener):
        """Call listener(params) for each `event` (after session.subscribe to it)."""
        self._listeners.setdefault(event, []).append(listener)

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


# ---- values: what script.callFunction takes and returns -------------------------------------

def local_value(value):
    """A JSON value as a BiDi LocalValue (the arguments of script.callFunction)."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")):
            return {"type": "number", "value": {float("inf"): "Infinity",
                                                float("-inf"): "-Infinity"}.get(value, "NaN")}
        return {"type": "number", "value": value}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, (list, tuple)):
        return {"type": "array", "value": [local_value(v) for v in value]}
    if isinstance(value, dict):
        return {"type": "object", "value": [[str(k), local_value(v)] for k, v in value.items()]}
    raise TypeError("not a JSON value: %r" % (value,))


def python_value(remote):
    """A BiDi RemoteValue as Python (JSON-like values; a node as its RemoteValue)."""
    kind = remote.get("type")
    if kind in ("undefined", "null"):
        return None
    if kind == "number":
        value = remote["value"]
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf"),
                "-0": -0.0}.get(value, value) if isinstance(value, str) else value
    if kind in ("string", "boolean"):
        return remote["value"]
    if kind in ("array", "set"):
        return [python_value(v) for v in remote.get("value", [])]
    if kind in ("object", "map"):
        return {(k if isinstance(k, str) else json.dumps(python_value(k))): python_value(v)
                for k, v in remote.get("value", [])}
    return remote  # a node, a window, a function: the caller decides


class BiDiSession:
    """A session on one top-level browsing context, with the commands the tests use."""

    def __init__(self, url):
        self.conn = BiDiConnection(url)
        self.capabilities = self.conn.command("session.new", {"capabilities": {}})["capabilities"]
        self.top = self.conn.command("browsingContext.getTree", {"maxDepth": 0})["contexts"][0]["context"]

    def subscribe(self, *events):
        self.conn.command("session.subscribe", {"events": list(events)})

    def navigate(self, url, context=None, wait="complete"):
        return self.conn.command("browsingContext.navigate", {
            "context": context or self.top, "url": url, "wait": wait})

    def children(self, context=None):
        """[(context id, url)] of the frames directly inside `context`."""
        tree = self.conn.command("browsingContext.getTree",
                                 {"root": context or self.top, "maxDepth": 1})["contexts"][0]
        return [(c["context"], c["url"]) for c in tree.get("children") or []]

    def call(self, function_source, args=(), context=None, user_activation=False, raw=False):
        """Call a function expression in `context` with JSON args, awaiting a promise."""
        result = self.conn.command("script.callFunction", {
            "functionDeclaration": function_source,
            "arguments": [local_value(a) for a in args],
            "target": {"context": context or self.top},
            "awaitPromise": True,
            "resultOwnership": "none",
            "userActivation": user_activation,
            "serializationOptions": {"maxObjectDepth": 64, "maxDomDepth": 0},
        })
        if result.get("type") == "exception":
            details = result.get("exceptionDetails", {})
            raise BiDiError("script error: %s" % details.get("text", details))
        return result["result"] if raw else python_value(result["result"])

    def perform(self, actions, context=None):
        """input.performActions, then input.releaseActions (nothing stays pressed)."""
        context = context or self.top
        self.conn.command("input.performActions", {"context": context, "actions": actions})
        self.conn.command("input.releaseActions", {"context": context})

    def set_viewport(self, width, height):
        self.conn.command("browsingContext.setViewport", {
            "context": self.top, "viewport": {"width": width, "height": height}})

    def screenshot_png(self):
        import base64
        data = self.conn.command("browsingContext.captureScreenshot", {"context": self.top})
        return base64.b64decode(data["data"])

    def print_pdf(self, width_cm, height_cm):
        """The top context printed on paper `width_cm` x `height_cm`, portrait, no background
        colours, the margins the page's @page rule asks for (BiDi's own are zero here)."""
        import base64
        data = self.conn.command("browsingContext.print", {
            "context": self.top, "page": {"width": width_cm, "height": height_cm},
            "margin": {"top": 0, "bottom": 0, "left": 0, "right": 0},
            "orientation": "portrait", "background": False, "shrinkToFit": False}, timeout=120)
        return base64.b64decode(data["data"])

    def end(self):
        """Close the browser (browser.close ends the session and the process)."""
        try:
            self.conn.command("browser.close", timeout=10)
        except BiDiError:
            pass
        self.conn.close()
