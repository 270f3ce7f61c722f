from pathlib import Path
Path("outside.json").write_text('{"type": "string"}')
Path("specs/_shared.json").symlink_to(Path("outside.json").resolve())
