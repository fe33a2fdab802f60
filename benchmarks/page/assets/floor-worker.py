# The PyScript worker floor's Python: NumPy imported, one function the page can call.
import numpy  # noqa: F401
from pyscript import sync

sync.ping = lambda: True
