"""Hearing the page through a real screen reader: python3 benchmarks/screen_reader."""
