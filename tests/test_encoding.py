"""Provider entries that share objects (one tool's schema in most of its targets' files) are
encoded once per object and spliced in: the text is byte for byte what encoding each entry whole
gives, whatever the values, the sharing and the depths, marker look-alikes in the data included."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolnexus_gen.targets.base import encode_entries, encode_entry

MARKER_LIKE = "\x00toolnexus-shared-0\x00"
leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.just(MARKER_LIKE)
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
containers = st.lists(values, max_size=3) | st.dictionaries(st.text(max_size=5), values, max_size=4)


@st.composite
def entries_sharing_objects(draw: Any) -> tuple[dict[str, Any], dict[str, int]]:
    pool = draw(st.lists(containers, min_size=1, max_size=3))  # the shared objects

    def holder(depth: int) -> Any:
        if depth == 0 or draw(st.booleans()):
            return pool[draw(st.integers(0, len(pool) - 1))]  # the same object, not a copy
        key = draw(st.sampled_from(["function", "toolSpec", "inputSchema", "json", "x"]))
        extra = draw(st.dictionaries(st.text(max_size=4), values, max_size=2))
        return {**extra, key: holder(depth - 1)}

    files = draw(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=7, unique=True))
    entries = {}
    for file in files:
        name = draw(st.text(max_size=6) | st.just(MARKER_LIKE))
        entries[file] = {"name": name, "schema": holder(draw(st.integers(0, 3)))}
        if draw(st.booleans()):
            entries[file]["also"] = [holder(0), holder(1)]
    depths = {file: draw(st.integers(0, 3)) for file in files}
    return entries, depths


@settings(max_examples=300, deadline=None)
@given(entries_sharing_objects())
def test_shared_objects_encode_to_the_same_bytes(
    case: tuple[dict[str, Any], dict[str, int]],
) -> None:
    entries, depths = case
    assert encode_entries(entries, depths) == {
        file: encode_entry(entry, depths[file]) for file, entry in entries.items()
    }
