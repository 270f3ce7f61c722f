from pathlib import Path
Path("outside.json").write_text('{"type": "string"}')
