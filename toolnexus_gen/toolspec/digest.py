"""What a spec's argument model is made from, as a digest. Light on purpose (no YAML, no
jsonschema): a build reads it before deciding whether to start datamodel-code-generator."""

from __future__ import annotations

from typing import Any

from toolnexus_gen.memo import canonical, sha

# Keys that never reach an argument model: the envelope's own (the model is made from the input
# schema alone) and, at the schema's root, what describes the tool or the file
# (codegen/models.py drops them too).
_NOT_MODEL = frozenset({"description", "examples", "annotations", "title", "strict", "targets"})
_NOT_MODEL_ROOT = frozenset({"title", "description", "examples", "$id", "$schema", "$comment"})


def model_input(data: Any) -> str:
    """A digest of what a spec's argument model is made from: equal digests (and unchanged
    $ref files) mean the same model, so an edit of only the description, examples, title,
    annotations, strict or targets never needs datamodel-code-generator."""
    if not isinstance(data, dict):
        return sha(canonical(data))
    kept = {
        key: value
        for key, value in data.items()
        if key not in _NOT_MODEL and key != "output_schema" and not str(key).startswith("x-")
    }
    schema = kept.get("input_schema", kept)
    if isinstance(schema, dict):
        trimmed = {k: v for k, v in schema.items() if k not in _NOT_MODEL_ROOT}
        kept = {**kept, "input_schema": trimmed} if "input_schema" in kept else trimmed
    return sha(canonical(kept))
