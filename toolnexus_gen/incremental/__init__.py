"""What makes a rebuild fast and never wrong: `cache` (hashing, the build state and the no-op
fast path, the per-tool memo), `reuse` (units taken back from the last build), `parallel` (worker
processes). Nothing here knows what a target or a spec means.
"""
