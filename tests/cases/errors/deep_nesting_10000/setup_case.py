"""A schema nested 10,000 levels deep: a located error, never a RecursionError."""
from pathlib import Path
depth = 10_000
inner = '{"type": "object", "properties": {"a": ' * depth + '{"type": "string"}' + "}}" * depth
Path("specs/deep.json").write_text('{"description": "deep", "input_schema": ' + inner + "}")
