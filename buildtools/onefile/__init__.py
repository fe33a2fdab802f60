"""The one file, dist/vit-head-explorer.html: the whole explorer in one HTML file that opens
from disk (page), and the Python it carries as bytecode (python)."""
