"""The tiny ViT: a small trained Vision Transformer for 8x8 digits whose z_L feeds the head
(docs/tiny-vit.md): its blocks, its weights' layout and checks, the model.
"""
