"""Unknown keys inside an argument: a key of a nested object that its schema does not declare.

Pydantic drops such a key from a nested model without a word (a generated model ignores extras
unless its schema forbids them), but the executors that send a call on (REST, MCP, a curated
tool) send the arguments as the model wrote them: an undeclared `profile.is_admin` would go
upstream verbatim. `refuse_nested` finds each one, with its path, after validation, so the call
is refused as an unknown top-level argument is (registry.unknown_arguments_error), before
anything is sent. An object whose schema takes other keys (`additionalProperties: true`,
pydantic's extra='allow') is sent whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, RootModel, ValidationError
from pydantic_core import PydanticCustomError

MAX_REPORTED = 10  # unknown keys reported one by one
MAX_KEY = 100  # characters of an unknown key repeated in the message


def declared_names(model: type[BaseModel]) -> frozenset[str] | None:
    """The keys a model takes, or None when it takes others too: its schema says so
    (`additionalProperties: true` or a schema: pydantic's extra='allow'), or its root is not
    an object of named fields (a RootModel)."""
    if issubclass(model, RootModel) or model.model_config.get("extra") == "allow":
        return None
    by_name = bool(
        model.model_config.get("populate_by_name") or model.model_config.get("validate_by_name")
    )
    names: set[str] = set()
    for field, info in model.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        names.add(alias or field)
        if by_name or not alias:
            names.add(field)
    return frozenset(names)


def refuse_nested(model: BaseModel, arguments: Any) -> None:
    """Raise ValidationError naming each key inside `arguments` (as sent, beside the model
    validated from them) that the object holding it does not declare."""
    found = list(_unknown(model, arguments, ()))
    if not found:
        return
    errors: list[Any] = []
    for loc, key, value, known in found[:MAX_REPORTED]:
        name = str(key)
        shown = name if len(name) <= MAX_KEY else f"{name[:MAX_KEY]}..."
        listed = ", ".join(sorted(known)[:20]) or "none"
        where = ".".join(map(str, loc))
        text = f"not an argument of this tool ({where} takes: {listed}; the call was not made)"
        errors.append(
            {
                "type": PydanticCustomError("unknown_argument", "{text}", {"text": text}),
                "loc": (*loc, shown),
                "input": value,
            }
        )
    if len(found) > MAX_REPORTED:
        more = f"and {len(found) - MAX_REPORTED} more keys this tool does not take"
        errors.append(
            {
                "type": PydanticCustomError("unknown_argument", "{text}", {"text": more}),
                "loc": (),
                "input": None,
            }
        )
    raise ValidationError.from_exception_data("arguments", errors)


def _unknown(
    value: Any, raw: Any, loc: tuple[Any, ...]
) -> Iterator[tuple[tuple[Any, ...], Any, Any, frozenset[str]]]:
    if isinstance(value, RootModel):
        yield from _unknown(value.root, raw, loc)
    elif isinstance(value, BaseModel):
        if not isinstance(raw, dict):  # a model instance a caller passed: its own values
            return
        model = type(value)
        known = declared_names(model)
        if known is not None and loc:  # the top level is the registry's (unknown_arguments)
            for key in raw:
                if key not in known:
                    yield loc, key, raw[key], known
        for field, info in model.model_fields.items():
            alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
            key = alias if alias is not None and alias in raw else field
            if key in raw:
                yield from _unknown(getattr(value, field), raw[key], (*loc, key))
    elif isinstance(value, (list, tuple)) and isinstance(raw, (list, tuple)):
        for index, (item, sent) in enumerate(zip(value, raw, strict=False)):
            yield from _unknown(item, sent, (*loc, index))
    elif isinstance(value, dict) and isinstance(raw, dict):
        for key, sent in raw.items():
            if key in value:
                yield from _unknown(value[key], sent, (*loc, key))
