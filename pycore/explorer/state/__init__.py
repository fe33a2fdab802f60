"""The explorer's state: what a person edits, its checks, and every way to make, change, save and
load it.
"""
