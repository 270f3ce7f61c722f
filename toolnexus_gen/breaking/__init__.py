"""Breaking-change detection: the tool surface at a revision (REF) against what a build makes
now, as findings by rule (`toolnexus-gen breaking`, `changelog`, and `sync --check` for an MCP
server's snapshot).

revision.py reads REF -> surface.py reads a package (or spec data) into a Surface -> rules.py
pairs the tools and runs each rule's check (schema.py: JSON Schema against JSON Schema;
python.py: model against model) -> config.py / policy.py select and add -> locate.py places the
findings in the specs -> report.py renders them.
"""
