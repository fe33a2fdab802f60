"""The heads the explorer compares with the fine-tuning head: the classic mistakes (from
pycore.pitfalls) and the variants worth knowing (from pycore.variants), all computed on the
user's own inputs and returned as (output, error) so the page can show either.
"""
import numpy as np

from . import variants
from .head import layer_norm
from .pitfalls import PITFALLS


class Variant(object):
    """One alternative head: a key, a title, where it comes from, and how to compute it."""

    def __init__(self, key, title, explanation, compute):
        self.key = key
        self.title = title
        self.explanation = explanation
        self.compute = compute


def _params(state):
    return variants.variant_params(state.D, state.C, seed=int(state.options.get("seed", 0) or 0))


def _mlp(activation):
    def compute(state):
        p = _params(state)
        h_hat = layer_norm(state.h_cls)
        return variants.mlp_pretraining_head(h_hat, p["W1"], p["b1"], p["W2"], p["b2"],
                                             activation=activation)
    return compute


def _gap(state):
    if state.mode != "encoder":
        raise ValueError("Global average pooling averages the patch tokens z_L[:, 1:, :], and this "
                         "state has only the CLS vectors. Switch the mode to 'Edit full encoder "
                         "output' (or load the 'Full encoder output' example) to compare.")
    if state.encoder_output.shape[1] < 2:
        raise ValueError("Global average pooling needs at least one patch token (N+1 >= 2).")
    return variants.gap_head(state.encoder_output, state.W_head)


def _bert(state):
    p = _params(state)
    return np.dot(variants.bert_pooler(state.h_cls, p["W_pool"], p["b_pool"]), state.W_head)


VARIANTS = (
    Variant("mlp_tanh", "Pre-training head: MLP, tanh",
            "During pre-training ViT classifies with an MLP of one hidden layer; the paper's code "
            "uses tanh as its activation. Here: tanh(h_hat W1 + b1) W2 + b2 with seeded random "
            "W1, b1, W2, b2 (hidden size D). At fine-tuning time this MLP is replaced by the "
            "single zero-initialized linear layer W_head.", _mlp("tanh")),
    Variant("mlp_gelu", "Pre-training head: MLP, GELU",
            "The same pre-training MLP with GELU instead of tanh, as the problem text describes it "
            "(the paper's code uses tanh; both are shown so you can compare). Same seeded weights "
            "as the tanh version.", _mlp("gelu")),
    Variant("gap", "Global average pooling instead of CLS",
            "Instead of the CLS token, average the patch tokens z_L[:, 1:, :] and apply the same "
            "LayerNorm and W_head. The paper reports this works about as well as the CLS token "
            "(with a different learning rate).", _gap),
    Variant("bert_pooler", "BERT's pooler",
            "BERT passes its CLS vector through a learned pooler, tanh(h W_pool + b_pool), before "
            "its classifier. ViT's fine-tuning head has no pooler: LayerNorm and one matrix. Here "
            "the pooler (seeded random W_pool, b_pool) feeds the same W_head.", _bert),
)


def choices(registry):
    return [[item.key, item.title] for item in registry]


def find(registry, key):
    for item in registry:
        if item.key == key:
            return item
    return None


def run_pitfall(state, key):
    """(output, error message) of the mistaken head `key` on the state's inputs."""
    pitfall = find(PITFALLS, key)
    kwargs = {"encoder_output": state.encoder_output} if state.mode == "encoder" else {"cls": state.cls}
    try:
        return pitfall.compute(state.W_head, seed=int(state.options.get("seed", 0) or 0), **kwargs), None
    except ValueError as err:
        return None, str(err)


def run_variant(state, key):
    """(output, error message) of the variant head `key` on the state's inputs."""
    try:
        return find(VARIANTS, key).compute(state), None
    except ValueError as err:
        return None, str(err)
