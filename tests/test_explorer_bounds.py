"""Input that costs time: a link, a cell or a request holding absurdly long numbers is
refused, with a short message, before it is parsed; nothing changes. Python 3.8 (the fallback
host) turns any digit string into an int, in time quadratic in its length (45 s for 1,000,000
digits), and 3.11+ refuses to spell out ints past 4,300 digits. How long each refusal takes
(far under a second): benchmarks/refusal_bench.py."""
import json
from urllib.parse import quote

import pytest

from pycore.explorer import decode_fragment, encode_fragment, protocol
from pycore.explorer.errors import StateError
from pycore.explorer.session import Session
from pycore.explorer.state import link, link_answer
from pycore.explorer.state.link import LINK_MAX, NUMBER_MAX_CHARS, json_loads

def link_with(number_text):
    return "#state=" + quote('{"W_head":[[1],[2]],"cls":[[%s,0]]}' % number_text)


def test_one_link_limit_for_writing_and_reading():
    assert link_answer.LINK_MAX is link.LINK_MAX


@pytest.mark.parametrize("digits", [1000000, 99000, NUMBER_MAX_CHARS + 1], ids=str)
def test_a_link_with_a_very_long_number_is_refused_at_once(digits):
    fragment = link_with("9" * digits)
    s = Session()
    before = encode_fragment(s.state)
    answer = s.handle({"op": "load", "fragment": fragment})  # its time: benchmarks/refusal_bench.py
    message = answer["error"]["message"]
    assert message.startswith("The state in this link could not be used")
    assert len(message) < 300 and encode_fragment(s.state) == before  # the worked example
    if len(fragment) > LINK_MAX:
        assert "{:,} characters long".format(len(fragment) - 1) in message
    else:   # quoted by its first digits, not spelled out
        assert "a number {:,} characters long (99999999999999999999...)".format(digits) in message


@pytest.mark.parametrize("text", ["1." + "5" * 99000, "1e" + "9" * 99000, "-" + "7" * 99000],
                         ids=["fraction", "exponent", "negative"])
def test_long_floats_and_exponents_too(text):
    with pytest.raises(StateError, match="characters long"):
        decode_fragment(link_with(text))
    answer = Session().handle({"op": "load", "fragment": link_with(text)})
    assert "characters long" in answer["error"]["message"]


def test_numbers_of_ordinary_length_still_read():
    state = decode_fragment(link_with("9" * 300))        # 1e300: long, but a float64
    assert state.cls[0, 0] == 1e300
    assert decode_fragment(link_with("-0.000001")).cls[0, 0] == -1e-6


def test_a_link_as_long_as_the_limit_is_read_and_one_longer_is_not():
    base = link_with("1")
    padded = base[:-len("%5D%5D%7D")] + "%20" * ((LINK_MAX - len(base) + 1) // 3) + "%5D%5D%7D"
    padded = padded[:LINK_MAX + 1]
    assert len(padded) in (LINK_MAX, LINK_MAX + 1) and padded.endswith("%7D")
    fits = padded if len(padded) == LINK_MAX + 1 else "#" + padded
    assert decode_fragment(fits).cls[0, 0] == 1                  # "#" + LINK_MAX characters
    with pytest.raises(StateError, match="longer than any link this page writes"):
        decode_fragment(fits + "0")                              # one more
    with pytest.raises(StateError, match="longer than any link this page writes"):
        decode_fragment("#state=" + "%20" * LINK_MAX)


def test_json_loads_bounds_numbers_and_quotes_a_prefix():
    assert json_loads('{"a": [1, -2.5, 3e4]}') == {"a": [1, -2.5, 3e4]}
    with pytest.raises(StateError) as err:
        json_loads("[" + "12345" * 200000 + "]", "the link's state")
    assert str(err.value) == ("the link's state holds a number 1,000,000 characters long "
                              "(12345123451234512345...): no float64 needs more than about 30")


def test_a_long_text_typed_into_a_cell_is_refused_at_once():
    s = Session()
    before = encode_fragment(s.state)
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "1" * 100000,
                       "commit": True})
    # the cell goes back to what it held, and says why
    assert answer["unchanged"] and answer["value"] == 2.0
    assert "is 100,000 characters long: too long for a number" in answer["error"]["message"]
    assert encode_fragment(s.state) == before


HUGE = [10 ** 5000, -(10 ** 5000), 10 ** 1000000]


def huge_int_requests(huge):
    """Every request with one field holding ``huge`` as it is, in a list, nested, in an object
    (the others filled with valid values); benchmarks/refusal_bench.py times them."""
    full = {"key": "cls", "index": [0, 0], "text": "1", "B": 2, "D": 4, "C": 3, "N1": 2,
            "name": "sample", "value": 0}
    for op, fields in protocol.REQUESTS.items():
        for field in fields:
            for value in (huge, [huge, 0], [[[huge] * 8] * 8], {"a": huge}):
                request = dict({k: v for k, v in full.items() if k in fields}, op=op)
                request[field] = value
                yield request


@pytest.mark.parametrize("huge", HUGE, ids=["5000-digits", "minus-5000-digits", "1e6-digits"])
def test_no_request_field_lets_a_huge_int_escape(huge):
    """Every field of every request, holding a huge int as it is, in a list, in an object:
    refused (never AttributeError, OverflowError, TypeError or ValueError), nothing changed,
    a short message."""
    for request in huge_int_requests(huge):
        s = Session()
        before = encode_fragment(s.state)
        answer = s.handle(request)
        assert answer["ok"] is False, request
        message = answer["error"]["message"]
        assert "whole number of about" in message and len(message) < 200, message
        assert encode_fragment(s.state) == before
        json.dumps(answer)


MALFORMED = ["x", {"a": 1}, ["a", "b"], [1, "b"], [[1]], [0, 0, 0, 0], ["0", "0"], {"0": 1},
             None, True, [], 1.5, -1, 2 ** 63, float("nan"), float("inf"), "1" * 500]


@pytest.mark.parametrize("op", sorted(protocol.REQUESTS))
def test_malformed_fields_are_refused_never_raised(op):
    """Strings for an index, an object for a text, NaN for a size...: an answer, never an
    AttributeError, OverflowError, TypeError or ValueError out of Session.handle."""
    full = {"key": "W_head", "index": [0, 0], "text": "1", "B": 2, "D": 4, "C": 3, "N1": 2,
            "name": "sample", "value": 0, "mode": "cls", "format": "json"}
    for field in protocol.REQUESTS[op]:
        for value in MALFORMED:
            request = dict({k: v for k, v in full.items() if k in protocol.REQUESTS[op]}, op=op)
            request[field] = value
            answer = Session().handle(request)
            assert answer["ok"] in (True, False), request
            json.dumps(answer, allow_nan=False)
