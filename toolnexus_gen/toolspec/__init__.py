"""Everything about a spec file itself: `load` (JSON/YAML with source positions), `refs` (`$ref`
inside the spec folder only), `bundle` (self-contained schemas, inlining), `validate` (the
envelope, examples, names across specs), `naming` (every Python name), `pointer` (JSON pointers).
"""
