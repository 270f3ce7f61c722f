"""The shortcuts that keep `toolnexus-gen breaking` fast at a thousand tools say what the long
way says: a finding's place read from only the parts of a JSON spec on the way to it, and token
estimates of ASCII text through an ASCII pattern, and of a text through its parts cut at each
`,"` before a word (each part's pieces costed once)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolnexus_gen.pipeline import tokens
from toolnexus_gen.toolspec.load import json_positions, parse_json
from toolnexus_gen.toolspec.pointer import join_pointer

KEYS = st.sampled_from(["a", "b", "c/d", "e~f", "ü", ""])
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def pointers(value: Any, at: str = "") -> list[str]:
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += pointers(item, join_pointer(at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += pointers(item, join_pointer(at, i))
    return found


def fail(code: str, message: str, *_: Any) -> Exception:
    return ValueError(f"{code} {message}")


@settings(max_examples=300, deadline=None)
@given(JSON, st.sampled_from([None, 1, 2]), st.data())
def test_positions_on_the_way_are_those_of_the_whole_walk(
    value: Any, indent: int | None, data: st.DataObject
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    _, every = parse_json(text, fail)
    wanted = data.draw(st.lists(st.sampled_from(pointers(value)), max_size=3))
    some = json_positions(text, wanted, fail)
    for pointer in wanted:
        probe = pointer
        while True:  # the pointer and each part on the way, key and value
            assert some.values[probe] == every.values[probe]
            if probe in every.keys:
                assert some.keys[probe] == every.keys[probe]
            if not probe:
                break
            probe = probe.rpartition("/")[0]
    assert set(some.values) <= set(every.values) and set(some.keys) <= set(every.keys)


ASCII = st.text(
    st.sampled_from(list("abcXYZ019_ \t\n\r\x0b\x0c\x1c\x1f\"'{}[]:,.-/\\~!?#()")), max_size=80
)


@settings(max_examples=500, deadline=None)
@given(ASCII | st.text(max_size=40))
def test_ascii_text_is_cut_into_the_same_pieces(text: str) -> None:
    if text.isascii() and not tokens._SEPARATORS.search(text):
        assert tokens._PIECE_ASCII.findall(text) == tokens._PIECE.findall(text)
    assert tokens.estimate_text(text) == sum_of_pieces(text)


WORDS = st.text(st.sampled_from(list(',"abZ0_é \n.:-\x1c')), max_size=6)


@settings(max_examples=500, deadline=None)
@given(st.lists(WORDS, max_size=12), JSON)
def test_text_cut_at_its_keys_costs_what_the_whole_text_costs(words: list[str], value: Any) -> None:
    text = '","'.join(words) + json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert tokens.estimate_text(text) == sum_of_pieces(text)
    again = tokens.estimate_text(text)  # the parts' costs remembered now
    assert again == sum_of_pieces(text)
    assert tokens.estimate({"a": text, "b": [text, text]}) == sum_of_pieces(
        json.dumps({"a": text, "b": [text, text]}, ensure_ascii=False, separators=(",", ":"))
    )


def sum_of_pieces(text: str) -> int:
    """The estimate as the module documents it, piece by piece through the Unicode pattern."""
    total = 0.0
    for piece in tokens._PIECE.findall(text):
        last = piece[-1]
        if last.isalpha():
            letters = len(piece) if piece[0].isalpha() else len(piece) - 1
            total += 1 if letters <= 8 else 1 + (letters - 8) / 8
        elif last.isdigit() or last.isspace() or last == "_":
            total += 1
        else:
            marks = len(piece.strip())
            total += 1 if marks <= 3 else marks / 3
    return round(total)


def test_a_long_text_is_costed_as_it_is_read_to_the_same_figure(monkeypatch: Any) -> None:
    """A text past the streaming length costs what the piece list costs (a 30 MB description
    at REF held every piece in a list: 1.45 GB)."""
    text = ('{"d": "' + "naïve café, 東京 ok; " * 4000 + '"}') * 3
    whole = tokens.estimate_text(text)
    monkeypatch.setattr(tokens, "_LONG", 1000)  # the same text, streamed
    assert len(text) > 1000 and tokens.estimate_text(text) == whole
    ascii_text = "alpha beta, gamma; " * 5000
    streamed = tokens.estimate_text(ascii_text)
    monkeypatch.setattr(tokens, "_LONG", 1 << 30)
    assert tokens.estimate_text(ascii_text) == streamed
