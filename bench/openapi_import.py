"""`toolnexus-gen import openapi` on a generated document: OPS operations whose 2xx responses
all use one shared component of PROPS properties (the shape that made the import quadratic: a
560 KB component shared by 200 operations took hours, one full meta-validation per operation).

Figures are ratios against a baseline measured in the same run: one full JSON Schema 2020-12
meta-validation of the shared component (what the import used to do for every operation).

Usage: python bench/openapi_import.py [--ops N] [--props N] [--yaml]
       (default 200 operations x 2,000 properties; --props 20000 is the 560 KB document;
       --yaml also times writing the specs as YAML, the default format, next to JSON)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def document(ops: int, props: int) -> dict[str, Any]:
    big = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(props)}}
    ok = {
        "description": "ok",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Big"}}},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Bench", "version": "1"},
        "servers": [{"url": "https://bench.test"}],
        "components": {"schemas": {"Big": big}},
        "paths": {
            f"/o{i}": {"get": {"operationId": f"op{i}", "responses": {"200": ok}}}
            for i in range(ops)
        },
    }


def main() -> None:
    from jsonschema import Draft202012Validator

    from toolnexus_gen.commands import importer
    from toolnexus_gen.sources import openapi

    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--props", type=int, default=2000)
    parser.add_argument("--yaml", action="store_true")
    options = parser.parse_args()
    doc = document(options.ops, options.props)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.json"
        path.write_text(json.dumps(doc))
        size = path.stat().st_size
        full = Draft202012Validator(Draft202012Validator.META_SCHEMA)
        started = time.perf_counter()
        assert not list(full.iter_errors(doc["components"]["schemas"]["Big"]))
        baseline = time.perf_counter() - started
        started = time.perf_counter()
        out = openapi.read(path)
        read = time.perf_counter() - started
        started = time.perf_counter()
        written = [importer.spec_text(spec, ".json") for spec in out.specs.values()]
        as_json = time.perf_counter() - started
    print(
        f"document: {options.ops} operations, one shared component of {options.props} "
        f"properties, {size / 1024:.0f} KB; specs written: {sum(map(len, written)) / 1e6:.1f} MB"
    )
    print(f"baseline, one full meta-validation of the component: {baseline:.2f} s")
    print(
        f"import (read, convert, check): {read:.2f} s = {read / baseline:.2f}x the baseline "
        f"(one full validation per operation, as before, would be {options.ops}x)"
    )
    print(f"writing the specs as JSON: {as_json:.2f} s = {as_json / baseline:.2f}x the baseline")
    if options.yaml:
        started = time.perf_counter()
        for spec in out.specs.values():
            importer.spec_text(spec, ".yaml")
        as_yaml = time.perf_counter() - started
        print(
            f"writing the specs as YAML: {as_yaml:.2f} s = {as_yaml / baseline:.2f}x the "
            f"baseline, {as_yaml / as_json:.0f}x JSON"
        )


if __name__ == "__main__":
    main()
