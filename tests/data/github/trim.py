"""Make the trimmed excerpt of GitHub's REST description kept under tests/data/github/
(NOTICE.md): the operations below, their 2xx responses and the components they reach;
examples, x-github keys and error responses dropped.
Run: python trim.py api.github.com.json > github-VERSION.json"""

import json
import sys

OPERATIONS = [
    "issues/create",
    "issues/get",
    "issues/update",
    "issues/list-for-repo",
    "issues/create-comment",
    "issues/list-comments",
    "issues/add-labels",
    "issues/lock",
    "issues/list-labels-for-repo",
    "pulls/list",
    "pulls/get",
    "pulls/create",
    "repos/get",
    "repos/list-tags",
    "search/issues-and-pull-requests",
]
DROP = {
    "x-github-breaking-changes",
    "examples",
    "example",
    "x-github",
    "externalDocs",
    "x-githubEnterpriseOverlays",
}


def clean(value):
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items() if k not in DROP}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def refs(value, found):
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/"):
            found.add(tuple(ref[len("#/components/") :].split("/", 1)))
        for v in value.values():
            refs(v, found)
    elif isinstance(value, list):
        for v in value:
            refs(v, found)


def main(path):
    doc = json.load(open(path))
    paths = {}
    for route, item in doc["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and op.get("operationId") in OPERATIONS:
                op = dict(op)
                op["responses"] = {c: r for c, r in op["responses"].items() if c.startswith("2")}
                paths.setdefault(route, {})[method] = clean(op)
                if "parameters" in item:
                    paths[route]["parameters"] = clean(item["parameters"])
    want, done = set(), set()
    refs(paths, want)
    components = {}
    while want - done:
        kind, name = sorted(want - done)[0]
        done.add((kind, name))
        value = clean(doc["components"][kind][name])
        components.setdefault(kind, {})[name] = value
        refs(value, want)
    out = {
        "openapi": doc["openapi"],
        "info": {k: doc["info"][k] for k in ("title", "description", "version", "license")},
        "servers": doc["servers"],
        "paths": paths,
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


main(sys.argv[1])
