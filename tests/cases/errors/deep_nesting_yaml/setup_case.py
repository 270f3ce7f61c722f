"""YAML flow nesting 10,000 levels deep."""
from pathlib import Path
Path("specs/deep.yaml").write_text("description: deep\nx: " + "[" * 10_000 + "]" * 10_000 + "\n")
