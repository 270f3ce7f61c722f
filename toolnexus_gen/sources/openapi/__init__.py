"""`toolnexus-gen import openapi FILE`: an OpenAPI 3.0 or 3.1 document (JSON or YAML, of any
size, in one file or several) becomes one spec per operation, bound to its endpoint by an
`http` key, so it needs no handler method; the schemas its operations share become shared
files beside them (`specs/_<api>/`), referred to by `$ref`.

The stages, a module each: document.py reads the files and follows `$ref`s; schemas.py makes
OpenAPI schemas JSON Schema 2020-12 and shares components; security.py turns security schemes
into `${VAR}` headers and keeps credentials from the model; operation.py maps parameters and
bodies onto one argument object and an `http` binding; naming.py makes every name.

What the document itself gets wrong is said where it is: a document that is not OpenAPI 3.x
(Swagger 2 is told first, TN470) is an error and nothing is written; an operation that cannot
be imported (a broken `$ref`, a component that is not valid JSON Schema once converted, a body
the runtime cannot send, a name another operation already gives) is skipped with a located
warning, and the others are imported. Only when none is left is the import an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError, Severity
from toolnexus_gen.progress import Progress, unseen
from toolnexus_gen.sources.openapi.document import At, Files, Skip, load
from toolnexus_gen.sources.openapi.operation import Operation
from toolnexus_gen.sources.openapi.schemas import Shared
from toolnexus_gen.sources.openapi.security import Security, default_prefix, prefix_problem
from toolnexus_gen.targets.reading import Imported
from toolnexus_gen.toolspec.http import placeholders
from toolnexus_gen.toolspec.load import LoadError

__all__ = ["OpenApiImport", "env_prefix_problem", "read"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch")  # OpenAPI's order
env_prefix_problem = prefix_problem


@dataclass
class OpenApiImport(Imported):
    """The specs of an OpenAPI document, the shared schema files, and what the summary says."""

    title: str = ""
    version: str = ""
    # environment variable -> what it holds (security schemes carried as ${VAR} headers)
    env: dict[str, str] = field(default_factory=dict)
    # environment variable -> the servers (origins) its header is sent to
    env_servers: dict[str, list[str]] = field(default_factory=dict)
    env_prefix: str = ""  # what every variable name starts with
    base_url_hint: str | None = None  # the document's server is relative: set base_url
    folder: str = ""  # the shared schemas' folder under the spec folder (_<api>)
    shared: dict[str, Any] = field(default_factory=dict)  # file stem -> schema
    skipped: list[Diagnostic] = field(default_factory=list)  # located: why, per operation
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> its tools


def read(
    path: Path,
    *,
    server: str | None = None,
    tags: Sequence[str] = (),
    env_prefix: str | None = None,
    progress: Progress = unseen,
) -> OpenApiImport:
    """The specs an OpenAPI document holds; raises DiagnosticsError (located) when it cannot
    be read as OpenAPI 3.x or no operation of it can be imported."""
    try:
        document = load(path)
    except LoadError as exc:
        raise DiagnosticsError([exc.diagnostic]) from None
    reader = Reader(Files(document), server, frozenset(tags), env_prefix)
    reader.progress = progress
    out = reader.read()
    if reader.problems:
        raise DiagnosticsError(reader.problems)
    return out


class Reader:
    def __init__(
        self, files: Files, server: str | None, tags: frozenset[str], env_prefix: str | None
    ) -> None:
        self.files = files
        self.data: Any = files.root.data
        self.server = server
        self.tags = tags
        self.env_prefix = env_prefix
        self.problems: list[Diagnostic] = []
        self.base_url_hint: str | None = None
        # (in, name) of a credential parameter -> the tools it was left out of
        self.credentials: dict[tuple[str, str], list[str]] = {}
        self.shared: Shared
        self.security: Security
        self.progress: Progress = unseen  # told of each operation made

    def error(self, code: str, message: str, pointer: str, *, key: bool = False) -> None:
        self.problems.append(
            Skip(code, message, At(self.files.root, pointer), key=key).diagnostic(Severity.ERROR)
        )

    def read(self) -> OpenApiImport:
        out = OpenApiImport()
        data = self.data
        if not isinstance(data, dict):
            self.error("TN450", "an OpenAPI document is an object", "")
            return out
        version = data.get("openapi")
        if not isinstance(version, str) or not re.match(r"3\.[01]\.", version + "."):
            self.error(
                "TN450",
                f"openapi must be a 3.0.x or 3.1.x version, not {version!r}",
                "/openapi" if "openapi" in data else "",
            )
            return out
        info: dict[str, Any] = data["info"] if isinstance(data.get("info"), dict) else {}
        out.title, out.version = str(info.get("title", "")), version
        stem = self.files.root.path.stem
        out.env_prefix = (
            self.env_prefix.upper() if self.env_prefix else default_prefix(out.title, stem)
        )
        out.folder = "_" + default_prefix(out.title, stem).split("_", 1)[1].lower()
        self.shared = Shared(self.files, out.folder, version.startswith("3.0"))
        self.security = Security(self.files, out.env_prefix)
        paths = data.get("paths", {})
        if not isinstance(paths, dict):
            self.error("TN450", "paths must be an object", "/paths")
            return out
        seen: dict[str, str] = {}  # tool name -> the operation that gave it
        found_tags: set[str] = set()
        for route, raw_item in paths.items():
            for operation in self._operations(route, raw_item, out, found_tags):
                label = f"{operation.method.upper()} {route}"
                try:
                    if operation.name in seen:
                        raise Skip(
                            "TN452",
                            f"{label} and {seen[operation.name]} both give the tool name "
                            f"{operation.name!r}: give them distinct operationIds",
                            operation.op_at.join("operationId")
                            if "operationId" in operation.operation
                            else operation.op_at,
                        )
                    spec = operation.spec()
                    self._check_env(spec, out, operation.op_at)
                except Skip as exc:
                    out.skipped.append(exc.diagnostic())
                    continue
                finally:
                    out.notes.extend(operation.notes)
                seen[operation.name] = label
                out.specs[operation.name] = spec
                self.progress("operations", len(out.specs))
                for group in spec.get("groups", ()):
                    out.groups.setdefault(group, []).append(operation.name)
        out.notes.extend(self.shared.notes)
        out.notes.extend(self.security.notes)
        for (place, name), tools in self.credentials.items():
            which = tools[0] if len(tools) == 1 else f"{len(tools)} operations"
            out.notes.append(
                f"{place} parameter {name!r} carries a credential: it is no argument for a model "
                f"({which}; the security headers, or your http_client, send it)"
            )
        out.env, out.env_servers = self.security.env, self.security.env_servers
        out.base_url_hint = self.base_url_hint
        out.shared = self.shared.texts() if out.specs else {}
        if not self.problems and not out.specs:
            self.problems.extend(
                Diagnostic(d.path, d.line, d.col, d.code, d.message, Severity.ERROR, d.pointer)
                for d in out.skipped
            )
            if self.tags and not out.skipped:
                known = ", ".join(sorted(found_tags)) or "none"
                self.error(
                    "TN450",
                    f"no operation is tagged {', '.join(sorted(self.tags))} (tags: {known})",
                    "/paths",
                )
            elif not out.skipped:
                self.error("TN450", "the document has no operations to import", "/paths")
        return out

    def _operations(
        self, route: str, raw_item: Any, out: OpenApiImport, found_tags: set[str]
    ) -> list[Operation]:
        where = At(self.files.root, "/paths").join(route)
        try:
            item, item_at = self.files.deref(raw_item, where)
            if not isinstance(item, dict):
                raise Skip("TN450", f"path item {route!r} must be an object", item_at)
        except Skip as exc:
            out.skipped.append(exc.diagnostic())
            return []
        found = []
        for method in METHODS:
            if method not in item:
                continue
            try:  # an operation may itself be a $ref to a file (DigitalOcean's layout)
                operation, op_at = self.files.deref(item[method], item_at.join(method))
                if not isinstance(operation, dict):
                    raise Skip("TN450", f"{method.upper()} {route} must be an object", op_at)
            except Skip as exc:
                out.skipped.append(exc.diagnostic())
                continue
            op_tags = operation.get("tags", [])
            op_tags = (
                [t for t in op_tags if isinstance(t, str)] if isinstance(op_tags, list) else []
            )
            found_tags.update(op_tags)
            if self.tags and not self.tags & set(op_tags):
                continue
            found.append(Operation(self, route, item, item_at, method, operation, op_at))
        return found

    def _check_env(self, spec: dict[str, Any], out: OpenApiImport, op_at: At) -> None:
        """Every ${VAR} a written header reads is one the import made: a document never
        chooses which variable is read (a guard; the names are made in security.py)."""
        for header, value in spec["http"].get("headers", {}).items():
            for kind, var in placeholders(value):
                if kind == "env" and var not in self.security.env:
                    raise Skip(
                        "TN454",
                        f"header {header!r} would read the environment variable {var}, which "
                        "this import did not name: the document cannot choose what is read",
                        op_at,
                    )

    # -- servers ------------------------------------------------------------------------------

    def base_url(
        self, item: dict[str, Any], operation: dict[str, Any], op_at: At, item_at: At
    ) -> str:
        """The server the operation is sent to (variables at their defaults), "" for none."""
        if self.server is not None:
            return self.server
        root = At(self.files.root, "")
        for holder, at in ((operation, op_at), (item, item_at), (self.data, root)):
            servers = holder.get("servers")
            if isinstance(servers, list) and servers:
                return self._server_url(servers[0], at.join("servers", 0))
        return ""

    def _server_url(self, server: Any, at: At) -> str:
        if not isinstance(server, dict) or not isinstance(server.get("url"), str):
            raise Skip("TN450", "a server needs a url", at)
        variables: dict[str, Any] = (
            server["variables"] if isinstance(server.get("variables"), dict) else {}
        )

        def default(match: re.Match[str]) -> str:
            variable = variables.get(match.group(1))
            if isinstance(variable, dict) and "default" in variable:
                return str(variable["default"])
            raise Skip(
                "TN450", f"server variable {match.group(1)!r} has no default", at.join("url")
            )

        url: str = re.sub(r"\{([^{}]+)\}", default, server["url"])
        return url.rstrip("/")
