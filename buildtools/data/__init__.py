"""Data read out of wheels pinned in artifacts.json at build time: the 8x8 digits and
ImageNet-1k's class names; nothing of them is committed."""
