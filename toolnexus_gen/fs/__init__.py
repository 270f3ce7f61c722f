"""The disk: `paths` (where spec files and output names are), `output` (the only module that
writes into the output folder: atomic writes, the manifest, the lock, `--check` diffs).
"""
