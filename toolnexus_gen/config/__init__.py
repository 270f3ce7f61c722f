"""Settings: `pyproject` (`[tool.toolnexus-gen]`, located TN802 errors) and `options` (where a
build reads and writes, flags over configuration). Light: every command starts here.
"""
