"""The build, stage by stage: `units` (each spec on its own: load, validate, bundle, check,
encode its provider entries), `build` (the whole set: discover, reuse, cross-spec checks), `render`
(units become a FileMap {relative path: text}). No disk writes here: `fs` writes.
"""
