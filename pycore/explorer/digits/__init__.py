"""Drawn digits read by the tiny trained ViT: their link form, their checks, and the mode they
feed.
"""
