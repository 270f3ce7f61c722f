"""Tools with the same argument schema have their model generated once (Microsoft Graph's
11,000 operations hold 6,500 different schemas): every other takes that source with its root
class renamed, which is byte for byte what the generator gives for that name, or is generated
on its own where a rename could differ (the name appears elsewhere, the class line would not
fit)."""

from __future__ import annotations

from typing import Any

import pytest

from toolnexus_gen.codegen.models import Models, _source, renamed
from toolnexus_gen.ir import ModelJob
from toolnexus_gen.memo import Memo

HEADER = "# DO NOT EDIT: generated"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "user-id": {"type": "string", "description": "key: id of user"},
        "select": {
            "type": "array",
            "uniqueItems": True,
            "items": {"type": "string", "enum": ["id", "displayName", "mail"]},
        },
        "top": {"type": "integer", "minimum": 0},
    },
    "required": ["user-id"],
}
NAMES = ["UsersGetUserArgs", "AArgs", "ZzzListEverythingArgs", "MeGetManagerArgs"]


def _job(name: str, schema: dict[str, Any]) -> ModelJob:
    return ModelJob(schema, name, name.lower(), "specs/x.yaml", (1, 1), "/input_schema")


def test_tools_with_one_schema_have_it_generated_once() -> None:
    models = Models(Memo(), lambda: HEADER)
    jobs = [_job(name, SCHEMA) for name in NAMES]
    other = _job(
        "UsersDeleteUserArgs", {"type": "object", "properties": {"id": {"type": "string"}}}
    )
    for n, job in enumerate([*jobs, other]):
        models.start(f"key{n}", job)

    assert len(models.started) == 2 and len(models.twins) == len(NAMES) - 1
    sources = models.sources([f"key{n}" for n in range(len(NAMES) + 1)], [*jobs, other])

    for name, source in zip([*NAMES, other.class_name], sources, strict=True):
        schema = SCHEMA if name != other.class_name else other.schema
        assert source == _source(schema, name, HEADER).rstrip("\n") + "\n"


def test_a_name_too_long_for_one_line_is_generated_on_its_own() -> None:
    long_name = "X" * 80 + "Args"  # `class XX...X(BaseModel):` passes 88 columns
    source = _source(SCHEMA, NAMES[0], HEADER)
    assert renamed(source, NAMES[0], long_name) is None

    models = Models(Memo(), lambda: HEADER)
    jobs = [_job(NAMES[0], SCHEMA), _job(long_name, SCHEMA)]
    models.start("a", jobs[0])
    models.start("b", jobs[1])
    _, made = models.sources(["a", "b"], jobs)

    assert made == _source(SCHEMA, long_name, HEADER).rstrip("\n") + "\n"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("UsersGetUserArgs", "Select"),  # a name the source holds already (an enum's)
        ("Select", "UsersGetUserArgs"),  # the old name is held elsewhere too
    ],
)
def test_no_rename_where_the_name_is_held_elsewhere(old: str, new: str) -> None:
    source = _source(SCHEMA, old, HEADER)
    assert "Select" in source  # the enum of `select`'s items
    assert renamed(source, old, new) is None
