"""What makes a rebuild fast and never wrong: `plan` (the last build's record read once: what
changed, what to reuse, what to make; and the record saved once), `cache` (hashing inputs and
outputs, the cache files, the no-op answer), `reuse` (units taken back from the last build).
Nothing here knows what a target or a spec means, and no stage calls in here: they run over the
plan.
"""
