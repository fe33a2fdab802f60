"""Fine-tuning the head on the page: the run, its memory budget, its code, the digits' probes, the
panel.
"""
