"""The exports: runnable NumPy code, the logits as CSV, the state as JSON, and what each may hold
in memory.
"""
