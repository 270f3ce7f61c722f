"""Only a shared fragment: the folder holds no tool spec."""
from pathlib import Path

Path("specs/_shared.yaml").write_text("$defs: {Id: {type: string}}\n")
