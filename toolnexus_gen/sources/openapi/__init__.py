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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError, Severity
from toolnexus_gen.progress import Progress, unseen
from toolnexus_gen.sources.openapi.document import At, Files, Skip, load
from toolnexus_gen.sources.openapi.naming import distinct_name, env_name, python_keys
from toolnexus_gen.sources.openapi.operation import Operation
from toolnexus_gen.sources.openapi.report import (
    named_skips,
    no_credentials_note,
    raw_bodies_note,
)
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
    warnings: list[Diagnostic] = field(default_factory=list)  # located: what was changed
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> its tools
    # tool -> (its spec, the file suffix, the text the build check read it from), set by the
    # check (commands.importer.carry): the very bytes written, not rendered a second time
    checked: dict[str, tuple[dict[str, Any], str, str]] = field(default_factory=dict)


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
        # tools whose parameters carry a credential that no header of the import sends
        self.uncredentialed: list[str] = []
        # a server URL without its user:password -> the variable its Basic credentials are in
        self.logins: dict[str, str] = {}
        self.login_origins: dict[str, str] = {}  # that variable -> the origin it is sent to
        self.warnings: list[Diagnostic] = []
        self.server_notes: list[str] = []
        self.shared: Shared
        self.security: Security
        self.progress: Progress = unseen  # told of each operation made
        self.untyped: list[Any] = []  # the result schemas left out of their specs (TN473)

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
        python: dict[str, str] = {}  # each Python name a tool gets -> that tool
        skips: list[tuple[Skip, str]] = []  # why an operation is skipped, and which
        untyped: list[tuple[Skip, str]] = []  # why an operation's result schema is left out
        found_tags: set[str] = set()
        raw_bodies: list[str] = []  # tools whose body is one argument's text or bytes
        for route, raw_item in paths.items():
            for operation in self._operations(route, raw_item, out, found_tags):
                label = f"{operation.method.upper()} {route}"
                if operation.name not in seen:
                    operation.name = distinct_name(operation.name, python, out.notes, label)
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
                    skips.append((exc, f"{operation.name} ({label})"))
                    continue
                finally:
                    out.notes.extend(operation.notes)
                seen[operation.name] = label
                if operation.result_left_out is not None:
                    untyped.append((operation.result_left_out, f"{operation.name} ({label})"))
                if operation.sends_no_credentials:
                    self.uncredentialed.append(operation.name)
                if operation.raw_body is not None:
                    raw_bodies.append(f"{operation.name} ({operation.raw_body})")
                python.update(dict.fromkeys(python_keys(operation.name), operation.name))
                out.specs[operation.name] = spec
                self.progress("operations", len(out.specs))
                for group in spec.get("groups", ()):
                    out.groups.setdefault(group, []).append(operation.name)
        out.skipped.extend(named_skips(skips))
        out.notes.extend(self.server_notes)
        out.notes.extend(self.shared.notes)
        out.notes.extend(self.security.notes)
        out.warnings = self.warnings + named_skips(untyped, "without a result schema")
        for (place, name), tools in self.credentials.items():
            which = tools[0] if len(tools) == 1 else f"{len(tools)} operations"
            out.notes.append(
                f"{place} parameter {name!r} carries a credential: it is no argument for a model "
                f"({which}; the security headers, or your http_client, send it)"
            )
        if self.uncredentialed:
            out.notes.append(no_credentials_note(self.uncredentialed, bool(self.security.schemes)))
        if raw_bodies:
            out.notes.append(raw_bodies_note(raw_bodies))
        out.env, out.env_servers = self.security.env, self.security.env_servers
        out.base_url_hint = self.base_url_hint
        # what only the results left out reach is not written (each spec's files are)
        unused = self.shared.reached(iter(self.untyped)) - self.shared.reached(
            schema for spec in out.specs.values() for schema in _schemas(spec)
        )
        out.shared = self.shared.texts(unused) if out.specs else {}
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
                webhooks = data.get("webhooks")
                if isinstance(webhooks, dict) and webhooks and not paths:
                    self.error(
                        "TN450",
                        f"the document has no operations to import: its {len(webhooks)} "
                        "webhooks are requests the API sends, not operations a tool calls",
                        "/webhooks",
                    )
                else:
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
        root = At(self.files.root, "")
        if self.server is not None:
            return self._without_login(self.server, root)
        for holder, at in ((operation, op_at), (item, item_at), (self.data, root)):
            servers = holder.get("servers")
            if isinstance(servers, list) and servers:
                at = at.join("servers", 0)
                return self._without_login(self._server_url(servers[0], at), at.join("url"))
        return ""

    def _without_login(self, url: str, at: At) -> str:
        """The server URL without a `user:password@` (a credential written into every spec
        and dispatch.py otherwise): the import sends it as Basic credentials read from an
        environment variable, with a warning, the first time it meets that URL."""
        parts = urlsplit(url)
        if "@" not in parts.netloc:
            return url
        clean = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        if clean not in self.logins:
            var = self._login_var(_origin_of(clean))
            self.logins[clean] = var
            self.warnings.append(
                Skip(
                    "TN455",
                    f"the server URL holds a user name and password: left out of the specs "
                    f"(it would be copied into each of them and into dispatch.py); the tools "
                    f"send it as Authorization: Basic ${{{var}}} (unless a security scheme "
                    f"sends an Authorization header): set {var} to the base64 of user:password",
                    at,
                ).diagnostic(Severity.WARNING)
            )
        return clean

    def _login_var(self, origin: str) -> str:
        """The variable a server's Basic credentials are read from: one per origin (one
        server's password is never sent to another), named from the prefix alone (never from
        the URL) and never the name a security scheme of the document gets."""
        for var, other in self.login_origins.items():
            if other == origin:
                return var
        schemes = {env_name(name, self.security.prefix) for name in self.security.schemes}
        base = var = f"{self.security.prefix}_SERVER_LOGIN"
        n = 2
        while var in schemes or var in self.login_origins:
            var, n = f"{base}_{n}", n + 1
        self.login_origins[var] = origin
        return var

    def login_header(self, base: str, origin: str, headers: dict[str, str]) -> dict[str, str]:
        """The headers, with the Basic credentials the server URL held (when no security
        scheme sends an Authorization header already)."""
        var = self.logins.get(base)
        if var is None or any(header.lower() == "authorization" for header in headers):
            return headers
        self.security.env.setdefault(
            var, "the server URL's user:password, base64-encoded, sent as Authorization: Basic"
        )
        servers = self.security.env_servers.setdefault(var, [])
        if origin not in servers:
            servers.append(origin)
        return {**headers, "Authorization": f"Basic ${{{var}}}"}

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
        if url.startswith("//"):  # protocol-relative: the host is given, the scheme is not
            note = f"the server {url!r} names no scheme: its tools call https:{url}"
            if note not in self.server_notes:
                self.server_notes.append(note)
            url = f"https:{url}"
        try:
            urlsplit(url)
        except ValueError as exc:  # an unclosed IPv6 bracket, a port that is no number
            raise Skip(
                "TN450", f"server url {url!r} is not a URL ({exc})", at.join("url")
            ) from None
        return url.rstrip("/")


def _schemas(spec: dict[str, Any]) -> Iterator[Any]:
    yield spec.get("input_schema")
    yield spec.get("output_schema")


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"
