"""The commands besides `build`, on files that belong to the user: `importer` (provider JSON
to specs), `project` (`init` and `scaffold`, written once, never replaced).
"""
