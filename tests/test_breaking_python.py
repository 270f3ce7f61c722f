"""The generated Python surface as `breaking` reads it: a model module read statement by
statement (each text parsed once, shared classes and fields among them) says the same as the
module parsed whole, for every generated module of the examples and for hand-written shapes
that cut a statement where a part starts."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from toolnexus_gen.breaking import python


def read(classes: dict[str, python.PyClass]) -> dict[str, Any]:
    return {
        name: (
            cls.is_enum,
            cls.members,
            {f: (x.annotation, x.members, x.names) for f, x in cls.fields.items()},
        )
        for name, cls in classes.items()
    }


def whole(text: str) -> dict[str, Any]:
    return read(python._classes(text, ast.parse(text)))


MODULES = sorted((ROOT / "examples").glob("**/models/*.py"))


def test_the_examples_have_model_modules() -> None:
    assert len(MODULES) >= 20


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_generated_module_reads_as_a_whole(path: Path) -> None:
    text = path.read_text()
    assert read(python.classes(text, str(path))) == whole(text)


SHAPES = {
    "docstring and decorator": '''
from enum import Enum
from pydantic import BaseModel, Field, field_validator


class Kind(Enum):
    """
    The kinds
    of things
    """
    a = "a"
    b = "b"


Other = Kind


class Args(BaseModel):
    """An argument model.

    class Fake(BaseModel):
    with lines that look like a class
    """
    model_config = {"extra": "forbid"}
    name: str = Field(
        ..., description="x"
    )
    kind: Kind | None = None

    @field_validator("name")
    @classmethod
    def check(cls, value: str) -> str:
        return value

    class Config:
        frozen = True


Args.model_rebuild()
''',
    "brackets cut at four spaces": """
from typing import Union
from pydantic import BaseModel


class Args(BaseModel):
    x: Union[
    int, str
    ]
    y: int = 1
""",
    "a string at the margin": '''
from pydantic import BaseModel


class Args(BaseModel):
    text: str = """
class Hidden(BaseModel):
    z: int
"""
    n: int
''',
}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_hand_written_module_reads_as_a_whole(shape: str) -> None:
    text = SHAPES[shape]
    found = read(python.classes(text, "models/x.py"))
    assert found == whole(text)
    assert "Hidden" not in found and "Fake" not in found and "Other" not in found


def test_a_module_that_is_not_python_is_refused_with_its_place() -> None:
    with pytest.raises(python.PythonError, match=r"models/x\.py:3: not Python"):
        python.classes(
            "from pydantic import BaseModel\n\nclass A(BaseModel:\n    x: int\n", "models/x.py"
        )


OLD_SHIP = """
class Address(BaseModel):
    street: StrictStr | None = None
    city: StrictStr


class ShipArgs(BaseModel):
    to: Address
    back: list[Address] | None = None
"""


@pytest.mark.parametrize(
    ("new_text", "exported", "said"),
    [
        # the same fields under a new name, not exported: nothing handler code sees differs
        (OLD_SHIP.replace("Address", "Location"), frozenset({"ShipArgs"}), []),
        # exported by name: code that imports it breaks
        (
            OLD_SHIP.replace("Address", "Location"),
            frozenset({"ShipArgs", "Address"}),
            [("class_renamed", "to"), ("class_renamed", "back")],
        ),
        # renamed and changed: a field type change, as before
        (
            OLD_SHIP.replace("Address", "Location").replace("city: StrictStr", "city: int"),
            frozenset(),
            [("field_type", "to"), ("field_type", "back")],
        ),
    ],
)
def test_a_nested_class_renamed_with_the_same_fields(
    new_text: str, exported: frozenset[str], said: list[tuple[str, str]]
) -> None:
    found = python.compare_models(OLD_SHIP, "ShipArgs", new_text, "ShipArgs", "m", exported)
    assert [(c.kind, c.path) for c in found] == said
