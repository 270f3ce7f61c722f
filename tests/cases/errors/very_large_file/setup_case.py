"""A 3 MB spec: over the 2 MB limit, refused before parsing."""
from pathlib import Path
big = '{"description": "' + "x" * 3_000_000 + '"}'
Path("specs/huge.json").write_text(big)
