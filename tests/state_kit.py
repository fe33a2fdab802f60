"""What the tests of the explorer state share (tests/test_pycore_state.py,
test_pycore_state_edits.py): two states compared, and the logits a state's head gives, from the
head written out in plain Python (tests/reference.py), not pycore's."""
import numpy as np

from reference import reference_head


def same(a, b):
    assert a.mode == b.mode and a.options == b.options
    np.testing.assert_array_equal(a.W_head, b.W_head)
    np.testing.assert_array_equal(a.inputs, b.inputs)


def logits(state):
    """The head on the CLS rows (position 0 of the encoder output in encoder mode)."""
    cls = state.cls if state.mode == "cls" else state.encoder_output[:, 0, :]
    return np.array(reference_head(cls, state.W_head))
