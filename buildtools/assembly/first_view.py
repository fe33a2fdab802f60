"""The page's first view, computed ahead of time: what build.py writes to default-view.json.

Run as a script (`python3 buildtools/assembly/first_view.py ROOT`), in a child Python, so that the
build's own process never imports NumPy: it prints the first view of the checkout at ROOT as JSON.

Booting Python in the browser takes seconds. Meanwhile the page shows the worked example as
pycore computes it here, with the same code path as the browser (Session's answer to loading
the default state), and without the two things only the browser's Python may say: the link it
holds and the runtime it runs on. Once Python is ready its own answer replaces this one, and
the page redraws whatever differs (NumPy versions may round a last bit differently).

Examples
--------
>>> view = first_view()
>>> view["ok"], sorted(view["matrices"]["W_head"])
(True, ['cols', 'data', 'rows'])
>>> "link" in view or "host" in view
False
"""
import json
import os
import sys


def first_view(session=None):
    """The answer to loading the default example, with its matrices attached.

    Parameters
    ----------
    session : Session, optional
        The session to load the default state into (a new one if omitted).

    Returns
    -------
    dict
        JSON-ready: Session's answer without "link" and "host", plus "matrices" mapping each
        key to {"rows", "cols", "data"} with data the row-major list of float64 values (JSON
        keeps every bit: Python writes the shortest text that reads back to the same double).
    """
    from pycore.explorer.protocol import matrix_names
    if session is None:
        from pycore.explorer.session import Session
        session = Session()
    answer = session.handle({"op": "load", "fragment": ""})
    answer.pop("link", None)
    answer.pop("host", None)
    matrices = {}
    for key in matrix_names(answer):
        m = session.matrix(key)
        matrices[key] = {"rows": m.shape[0], "cols": m.shape[1], "data": m.ravel().tolist()}
    answer["matrices"] = matrices
    return answer


if __name__ == "__main__":
    sys.path.insert(0, os.path.abspath(sys.argv[1]))  # that checkout's pycore, not an installed one
    print(json.dumps(first_view(), allow_nan=False))
