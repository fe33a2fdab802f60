"""Typed cells, pasted blocks and number display (pycore.explorer.state.cells)."""


import pytest
from hypothesis import given, settings, strategies as st


from pycore.explorer.state.cells import format_number, parse_block, parse_cell  # noqa: E402
from pycore.explorer.errors import StateError  # noqa: E402


@pytest.mark.parametrize("text, value", [
    ("1", 1.0), ("-2.5", -2.5), ("1e-3", 0.001), (" 3 ", 3.0), ("\u22122", -2.0),
    ("+4", 4.0), (".5", 0.5), ("5.", 5.0), ("1E+2", 100.0), ("\t-0\n", 0.0),
    ("1e-400", 0.0), ("1.7976931348623157e308", 1.7976931348623157e308), (7, 7.0), (0.25, 0.25)])
def test_parse_cell_accepts(text, value):
    assert parse_cell(text) == value


@pytest.mark.parametrize("text, message", [
    ("abc", "cls[0,2]: 'abc' is not a number"),
    ("nan", "cls[0,2]: NaN is not allowed: type a finite number"),
    ("-NaN", "cls[0,2]: NaN is not allowed: type a finite number"),
    ("inf", "cls[0,2]: infinity is not allowed: type a finite number"),
    ("-Infinity", "cls[0,2]: infinity is not allowed: type a finite number"),
    ("1e400", "cls[0,2]: '1e400' is too large (float64 ends near 1.8e308)"),
    ("", "cls[0,2]: empty: type a number"),
    ("   ", "cls[0,2]: empty: type a number"),
    ("1,5", "cls[0,2]: use a dot for decimals: 1.5 not 1,5"),
    ("--3", "cls[0,2]: '--3' has more than one sign: write one, e.g. -3"),
    ("1 2", "cls[0,2]: '1 2' holds several values: one number per cell"),
    ("1_000", "cls[0,2]: '1_000' is not a number"),
    ("0x10", "cls[0,2]: '0x10' is not a number"),
    (None, "cls[0,2]: expected the text of a number, got NoneType"),
    (True, "cls[0,2]: expected the text of a number, got bool"),
    (float("nan"), "cls[0,2]: 'nan' is not a finite number"),
    (10 ** 400, "is not a finite number"),
])
def test_parse_cell_rejects_with_a_short_specific_message(text, message):
    with pytest.raises(StateError) as info:
        parse_cell(text, where="cls[0,2]")
    assert message in str(info.value)
    assert len(str(info.value)) < 90


def test_parse_cell_without_where_has_no_prefix():
    with pytest.raises(StateError) as info:
        parse_cell("abc")
    assert str(info.value) == "'abc' is not a number"


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e308, max_value=1e308))
def test_parse_cell_reads_back_repr_and_format(x):
    assert parse_cell(repr(x)) == x
    assert parse_cell(repr(x).replace("-", "\u2212")) == x
    assert isinstance(parse_cell(format_number(x)), float)
    assert isinstance(parse_cell(format_number(x, trim=True)), float)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_parse_cell_never_raises_anything_but_state_error(text):
    try:
        value = parse_cell(text)
    except StateError:
        return
    assert isinstance(value, float) and value == value and abs(value) != float("inf")


@pytest.mark.parametrize("x, decimals, trim, text", [
    (0.2, 4, False, "0.2000"), (-0.1, 4, False, "-0.1000"), (0.885437, 4, False, "0.8854"),
    (-1e-9, 4, False, "0.0000"), (-0.0, 4, False, "0.0000"), (-0.00004, 4, False, "0.0000"),
    (-0.00005001, 4, False, "-0.0001"), (1234567.0, 4, False, "1.2346e+06"),
    (-2.5e12, 2, False, "-2.50e+12"), (2.0, 4, True, "2"), (-0.25, 4, True, "-0.25"),
    (-1e-9, 4, True, "0"), (1e6, 4, True, "1e+06"), (3.14159, 2, False, "3.14"),
    (float("nan"), 4, False, "NaN"), (float("inf"), 4, False, "inf"),
    (float("-inf"), 4, False, "-inf"), (5, 0, False, "5")])
def test_format_number(x, decimals, trim, text):
    assert format_number(x, decimals, trim=trim) == text


def test_format_number_takes_numpy_scalars():
    import numpy as np
    assert format_number(np.float64(-0.5)) == "-0.5000"
    assert format_number(np.float32(0.25), 2) == "0.25"
    assert format_number(np.int64(3), trim=True) == "3"


@pytest.mark.parametrize("text, rows", [
    ("1\t2\n3\t4\n", [[1, 2], [3, 4]]),                     # spreadsheet copy
    ("1\t2\r\n3\t4\r\n", [[1, 2], [3, 4]]),                 # ... from Windows
    ("1,2\n3,4", [[1, 2], [3, 4]]),                         # CSV
    ("1;2\n3;4", [[1, 2], [3, 4]]),                         # CSV with semicolons
    ('"1","2"\n"3","4"', [[1, 2], [3, 4]]),                 # quoted CSV
    ("1 2\n 3   4 ", [[1, 2], [3, 4]]),                     # whitespace
    ("\n\n1 2\n3 4\n\n", [[1, 2], [3, 4]]),                 # blank lines around
    ("[[1, 2], [3, 4]]", [[1, 2], [3, 4]]),                 # Python literal
    ("np.array([[1,2],[3,4]])", [[1, 2], [3, 4]]),          # NumPy call
    ("numpy.array([[1, 2], [3, 4]], dtype=float)", [[1, 2], [3, 4]]),
    ("array([[1., 2.],\n       [3., 4.]])", [[1, 2], [3, 4]]),   # NumPy repr
    ("[[1. 2.]\n [3. 4.]]", [[1, 2], [3, 4]]),              # NumPy str
    ("[[1, 2], [3, 4],]", [[1, 2], [3, 4]]),                # trailing comma
    ("[1, 2, 3]", [[1, 2, 3]]),                             # one row
    ("7", [[7]]),
    ("\u22121\t2", [[-1, 2]]),
])
def test_parse_block_formats(text, rows):
    assert parse_block(text) == [[float(v) for v in r] for r in rows]


@pytest.mark.parametrize("text, message, index", [
    ("", "nothing to paste: the block is empty", None),
    ("  \n\t\n", "nothing to paste: the block is empty", None),
    ("[]", "nothing to paste: the block has no numbers", None),
    ("1 2\n3", "row 2 has 1 value but row 1 has 2: a pasted block must be rectangular", (1,)),
    ("1\t2\t3\n4\t5", "row 2 has 2 values but row 1 has 3", (1,)),
    ("[[1, 2], [3]]", "row 2 has 1 value but row 1 has 2", (1,)),
    ("1 2\n3 abc", "row 2, column 2: 'abc' is not a number", (1, 1)),
    ("1\tnan", "row 1, column 2: NaN is not allowed", (0, 1)),
    ("1,5\t2", "row 1, column 1: use a dot for decimals: 1.5 not 1,5", (0, 0)),
    ("1\t\t3", "row 1, column 2: empty: type a number", (0, 1)),
    ("1 2\n\n3 4", "row 2 of the pasted block is empty", (1,)),
    ("[[[1]]]", "only 2-D blocks can be pasted", None),
    ("[[1, 2], 3]", "mixes rows and loose values", None),
    ("[[1, 2]", "unmatched [", None),
    ("np.array(1, 2)", "does not start with [ and end with ]", None),
    ("[1, 2]]", "unmatched ]", None),
])
def test_parse_block_errors(text, message, index):
    with pytest.raises(StateError) as info:
        parse_block(text)
    assert message in str(info.value)
    assert info.value.index == index


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789.,;-+eE[]() \t\nnpary\u2212")),
               max_size=60) | st.text(max_size=60))
def test_parse_block_never_raises_anything_but_state_error(text):
    try:
        rows = parse_block(text)
    except StateError:
        return
    assert rows and all(len(r) == len(rows[0]) for r in rows)
    assert all(isinstance(v, float) for r in rows for v in r)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=3,
                         max_size=3), min_size=1, max_size=4),
       st.sampled_from(["\t", ",", " ", "literal"]))
def test_parse_block_round_trips_what_it_is_given(rows, style):
    if style == "literal":
        text = repr(rows)
    else:
        text = "\n".join(style.join(repr(v) for v in row) for row in rows)
    assert parse_block(text) == rows
