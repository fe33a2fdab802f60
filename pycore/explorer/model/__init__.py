"""A lecturer's own model from a file: its formats, its checks, its crossing from the page, its
class names.
"""
