"""`toolnexus-gen import openapi FILE`: an OpenAPI 3.0 or 3.1 document (JSON or YAML) becomes one
spec per operation, bound to its endpoint by an `http` key, so it needs no handler method.

Per operation:
- name: the operationId made safe for every provider (`[A-Za-z0-9_]`, at most 64 characters, a
  stable hash suffix when cut), else the method and path (`get_pets_petId`); two operations
  that give one name are an error naming both;
- description: summary and description;
- input schema: one flat object of arguments. Path, query and header parameters keep their names
  (Accept, Content-Type and Authorization header parameters are ignored, as OpenAPI says; cookie
  parameters are not carried). The JSON (or urlencoded form) request body joins them: its
  properties become arguments too when it is a plain object whose property names no parameter
  uses; otherwise (an array, allOf/oneOf, a name two places use, an optional body with required
  properties) the whole body is one argument, `body` (`body_arg` in the binding). A path or
  header parameter whose name a query parameter already has becomes `<name>_path` or
  `<name>_header` (the URL and header templates say where it goes);
- output schema: the JSON schema of the first 2xx response, when it is an object (MCP's
  outputSchema must be one);
- annotations: readOnlyHint for GET and HEAD, idempotentHint for PUT and DELETE,
  destructiveHint for DELETE;
- `http`: the method, the path under the server (`--server`, else the operation's, its path's
  or the document's first server, variables at their defaults) as base_url, header templates,
  the query parameters (`query`) when there is a body, and the body mode.

Schemas become JSON Schema 2020-12: every local `$ref` reached is copied into the tool's own
`$defs` (looked up with `referencing`); OpenAPI 3.0's `nullable` becomes a `null` type (or an
anyOf with null), boolean `exclusiveMinimum`/`exclusiveMaximum` become numbers, `example` becomes
`examples`; `discriminator`, `xml`, `externalDocs` and `x-` extensions are dropped; a property
marked readOnly leaves input schemas, a writeOnly one output schemas. `nullable: true` in a 3.1
document is read the same way (its author's intent is plain; 3.1 itself ignores it).

Security schemes become headers whose values are `${VAR}` placeholders, read from the
environment at run time: http bearer, oauth2 and openIdConnect as `Authorization: Bearer
${VAR}`, apiKey in a header as that header, apiKey in a cookie as `Cookie: name=${VAR}`. An API
key in the query string (it would be logged with the URL) and http basic are not carried: the
summary says so, and `Toolkit(http_client=httpx.AsyncClient(auth=...))` covers them. The
variable is named here, never by the document: a prefix (from the title, or `--env-prefix`) and
the scheme's name in capitals, so a document cannot have its server sent a variable of the
user's choosing (`OPENAI_API_KEY`, `HOME`); a scheme name with template syntax in it, or a
header or cookie name that is no HTTP token or one the HTTP client owns, is TN454; and every
${VAR} written is checked against the summary's list. Header parameters a tool may not set
(Host, Content-Length, ...) are left out and said.

A document that is not OpenAPI 3.x where the import needs it, a `$ref` that points nowhere or
out of the document, or a schema that reaches itself with nothing in between (`A: {allOf:
[{$ref: A}]}`), is an error at its line and column (TN450, TN451); nothing is written. Each
schema object is meta-validated once per import (toolspec/metaschema.py), however many operations
share it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import referencing
import referencing.exceptions

from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError
from toolnexus_gen.ir import Document
from toolnexus_gen.progress import Progress, unseen
from toolnexus_gen.targets.reading import Imported
from toolnexus_gen.toolspec.bundle import ANNOTATIONS, ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS
from toolnexus_gen.toolspec.http import HEADER_NAME, header_problem, placeholders
from toolnexus_gen.toolspec.load import LoadError, load_document
from toolnexus_gen.toolspec.metaschema import MetaCheck
from toolnexus_gen.toolspec.pointer import escape, join_pointer, unescape

METHODS = ("get", "put", "post", "delete", "options", "head", "patch")  # OpenAPI's order
BODY_METHODS = ("POST", "PUT", "PATCH")  # where the binding's default body is json
IGNORED_HEADERS = {"accept", "content-type", "authorization"}  # OpenAPI: SHALL be ignored
DROPPED = {"discriminator", "xml", "externalDocs", "nullable", "example"}
MAX_NAME = 64  # what OpenAI, Gemini and Bedrock take
# what a security scheme's name may not hold: it must never reach a template as syntax
UNSAFE_NAME = re.compile(r"[${};=\x00-\x1f\x7f-\x9f]")


@dataclass
class OpenApiImport(Imported):
    """The specs of an OpenAPI document, and what the summary says about them."""

    title: str = ""
    version: str = ""
    # environment variable -> what it holds (security schemes carried as ${VAR} headers)
    env: dict[str, str] = field(default_factory=dict)
    # environment variable -> the servers (origins) its header is sent to
    env_servers: dict[str, list[str]] = field(default_factory=dict)
    env_prefix: str = ""  # what every variable name starts with
    base_url_hint: str | None = None  # the document's server is relative: set base_url


def read(
    path: Path,
    *,
    server: str | None = None,
    tags: Sequence[str] = (),
    env_prefix: str | None = None,
    progress: Progress = unseen,
) -> OpenApiImport:
    """The specs an OpenAPI document holds; raises DiagnosticsError (located) when it cannot
    be read as OpenAPI 3.x. `env_prefix` starts every environment variable name (default: from
    the document's title)."""
    try:
        document = load_document(path, scalar_keys=True)
    except LoadError as exc:
        raise DiagnosticsError([exc.diagnostic]) from None
    reader = _Reader(document, server, frozenset(tags), env_prefix)
    reader.progress = progress
    out = reader.read()
    if reader.problems:
        raise DiagnosticsError(reader.problems)
    return out


def env_prefix_problem(prefix: str) -> str | None:
    """Why `--env-prefix` cannot start environment variable names, or None."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", prefix):
        return "letters, digits and _, not starting with a digit"
    return None


class _Stop(Exception):
    """The document cannot be read further (the problem is recorded)."""


class _Reader:
    def __init__(
        self,
        document: Document,
        server: str | None,
        tags: frozenset[str],
        env_prefix: str | None = None,
    ) -> None:
        self.document = document
        self.data = document.data
        self.server = server
        self.tags = tags
        self.env_prefix = env_prefix
        self.problems: list[Diagnostic] = []
        self.uri = document.path.resolve().as_uri()
        registry: referencing.Registry[Any] = referencing.Registry().with_resource(
            self.uri, referencing.Resource.opaque(self.data)
        )
        self.resolver = registry.resolver(base_uri=self.uri)
        self.v30 = False
        self.meta = MetaCheck()  # a component many operations share is checked once
        self.progress: Progress = unseen  # told of each operation made

    # -- problems and references --------------------------------------------------------------

    def fail(self, code: str, message: str, pointer: str, *, key: bool = False) -> None:
        positions = self.document.positions
        line, col = positions.key(pointer) if key else positions.value(pointer)
        self.problems.append(
            Diagnostic(self.document.display, line, col, code, message, pointer=pointer or "/")
        )

    def lookup(self, ref: Any, pointer: str) -> tuple[Any, str]:
        """What a $ref (at `pointer`, the object holding it) points to, and its pointer."""
        if not isinstance(ref, str) or not ref.startswith("#"):
            self.fail(
                "TN451",
                f"$ref {ref!r} is not a reference inside this document: only #/... references "
                "are followed (nothing is fetched); bundle the document into one file first",
                f"{pointer}/$ref",
            )
            raise _Stop
        try:
            resolved = self.resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            self.fail(
                "TN451", f"$ref {ref!r} points to nothing in this document", f"{pointer}/$ref"
            )
            raise _Stop from None
        target = ref[1:]
        return resolved.contents, target

    def deref(self, node: Any, pointer: str) -> tuple[Any, str]:
        """A Reference Object followed to what it names (chains too), with its pointer."""
        seen = set()
        while isinstance(node, dict) and "$ref" in node:
            if pointer in seen:
                self.fail("TN451", "these $refs point to each other without end", pointer)
                raise _Stop
            seen.add(pointer)
            node, pointer = self.lookup(node["$ref"], pointer)
        return node, pointer

    def mapping(self, node: Any, pointer: str, what: str) -> dict[str, Any]:
        if not isinstance(node, dict):
            self.fail("TN450", f"{what} must be an object", pointer)
            raise _Stop
        return node

    # -- the document -------------------------------------------------------------------------

    def read(self) -> OpenApiImport:
        out = OpenApiImport()
        data = self.data
        if not isinstance(data, dict):
            self.fail("TN450", "an OpenAPI document is an object", "")
            return out
        version = data.get("openapi")
        if not isinstance(version, str) or not re.match(r"3\.[01]\.", version + "."):
            if "swagger" in data:
                message = (
                    f"this is a Swagger {data['swagger']} document: convert it to OpenAPI 3 first "
                    "(for example with swagger2openapi)"
                )
            else:
                message = f"openapi must be a 3.0.x or 3.1.x version, not {version!r}"
            self.fail("TN450", message, "/openapi" if "openapi" in data else "")
            return out
        self.v30 = version.startswith("3.0")
        info: dict[str, Any] = data["info"] if isinstance(data.get("info"), dict) else {}
        out.title, out.version = str(info.get("title", "")), version
        out.env_prefix = (
            self.env_prefix.upper()
            if self.env_prefix
            else _title_prefix(out.title, self.document.path.stem)
        )
        try:
            paths = self.mapping(data.get("paths", {}), "/paths", "paths")
        except _Stop:
            return out
        seen: dict[str, str] = {}  # tool name -> the operation that gave it
        found_tags: set[str] = set()
        for route, item in paths.items():
            where = join_pointer("/paths", route)
            try:
                item, item_at = self.deref(item, where)
                item = self.mapping(item, item_at, f"path item {route!r}")
            except _Stop:
                continue
            for method in METHODS:
                if method not in item:
                    continue
                op_at = join_pointer(item_at, method)
                try:
                    operation = self.mapping(item[method], op_at, f"{method.upper()} {route}")
                    op_tags = operation.get("tags", [])
                    found_tags.update(t for t in op_tags if isinstance(t, str))
                    if self.tags and not self.tags & set(op_tags):
                        continue
                    name, spec = _Operation(self, out, route, item, item_at, method, op_at).spec()
                except _Stop:
                    continue
                if name in seen:
                    self.fail(
                        "TN452",
                        f"{method.upper()} {route} and {seen[name]} both give the tool name "
                        f"{name!r}: give them distinct operationIds",
                        f"{op_at}/operationId" if "operationId" in operation else op_at,
                    )
                    continue
                seen[name] = f"{method.upper()} {route}"
                out.specs[name] = spec
                self.progress("operations", len(out.specs))
                self._check_env(spec, out, op_at)
        if not self.problems and not out.specs:
            if self.tags:
                known = ", ".join(sorted(found_tags)) or "none"
                self.fail(
                    "TN450",
                    f"no operation is tagged {', '.join(sorted(self.tags))} (tags: {known})",
                    "/paths",
                )
            else:
                self.fail("TN450", "the document has no operations to import", "/paths")
        return out

    def _check_env(self, spec: dict[str, Any], out: OpenApiImport, op_at: str) -> None:
        """Every ${VAR} a written header reads is one the import made and the summary lists:
        a document never chooses which variable is read (a guard; the names are made here)."""
        for header, value in spec["http"].get("headers", {}).items():
            for kind, var in placeholders(value):
                if kind == "env" and var not in out.env:
                    self.fail(
                        "TN454",
                        f"header {header!r} would read the environment variable {var}, which "
                        "this import did not name: the document cannot choose what is read",
                        op_at,
                    )

    # -- servers and security -----------------------------------------------------------------

    def base_url(
        self, item: dict[str, Any], operation: dict[str, Any], op_at: str, item_at: str
    ) -> str:
        """The server the operation is sent to (variables at their defaults), "" for none."""
        if self.server is not None:
            return self.server
        for holder, at in ((operation, op_at), (item, item_at), (self.data, "")):
            servers = holder.get("servers")
            if isinstance(servers, list) and servers:
                return self._server_url(servers[0], f"{at}/servers/0")
        return ""

    def _server_url(self, server: Any, pointer: str) -> str:
        server = self.mapping(server, pointer, "a server")
        url = server.get("url")
        if not isinstance(url, str):
            self.fail("TN450", "a server needs a url", pointer)
            raise _Stop
        variables = server.get("variables") if isinstance(server.get("variables"), dict) else {}

        def default(match: re.Match[str]) -> str:
            variable = variables.get(match.group(1))
            if isinstance(variable, dict) and "default" in variable:
                return str(variable["default"])
            self.fail(
                "TN450",
                f"server variable {match.group(1)!r} has no default",
                f"{pointer}/url",
            )
            raise _Stop

        return re.sub(r"\{([^{}]+)\}", default, url).rstrip("/")

    def security_headers(
        self, operation: dict[str, Any], op_at: str, out: OpenApiImport, origin: str
    ) -> dict[str, str]:
        """Headers for the first security requirement whose schemes can all be carried."""
        if "security" in operation:
            requirements, at = operation["security"], f"{op_at}/security"
        else:
            requirements, at = self.data.get("security", []), "/security"
        if not isinstance(requirements, list):
            self.fail("TN450", "security must be a list of requirements", at)
            raise _Stop
        schemes = self.data.get("components", {}).get("securitySchemes", {})
        if not isinstance(schemes, dict):
            schemes = {}
        missed: list[str] = []
        for requirement in requirements:
            if not isinstance(requirement, dict):
                continue
            headers: dict[str, str] = {}
            env: dict[str, str] = {}
            carried = True
            for scheme_name in requirement:
                header = self._scheme_header(scheme_name, schemes, out.env_prefix)
                if header is None:
                    carried = False
                    missed.append(scheme_name)
                    break
                key, value, var, what = header
                if key == "Cookie" and key in headers:
                    value = f"{headers[key]}; {value}"
                headers[key] = value
                env[var] = what
            if carried:
                for var, what in env.items():
                    out.env.setdefault(var, what)
                    servers = out.env_servers.setdefault(var, [])
                    if origin not in servers:
                        servers.append(origin)
                return headers
        for scheme_name in missed:
            note = (
                f"security scheme {scheme_name!r} is not carried ({_scheme_kind(schemes.get(scheme_name))}); "
                "give the Toolkit an http_client that authenticates (httpx.AsyncClient(auth=...))"
            )
            if note not in out.notes:
                out.notes.append(note)
        return {}

    def _scheme_header(
        self, name: str, schemes: dict[str, Any], prefix: str
    ) -> tuple[str, str, str, str] | None:
        """(header, value template, environment variable, what it holds) for a scheme that
        can be carried, else None. The variable is the prefix and the scheme's name, made a
        variable name here: the document never chooses it, nor the text around it."""
        pointer = join_pointer("/components/securitySchemes", name)
        try:
            scheme, scheme_at = self.deref(schemes.get(name), pointer)
        except _Stop:
            return None
        if not isinstance(scheme, dict):  # not defined: said in the summary as not carried
            return None
        if UNSAFE_NAME.search(name):
            self.fail(
                "TN454",
                f"security scheme name {name!r} holds $, {{, }}, ;, = or a control character",
                pointer,
                key=True,
            )
            raise _Stop
        kind = scheme.get("type")
        var = _env_name(name, prefix)
        bearer = kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer"
        if bearer or kind in ("oauth2", "openIdConnect"):
            what = "a bearer token" if kind == "http" else f"an {kind} access token"
            return (
                "Authorization",
                f"Bearer ${{{var}}}",
                var,
                f"{what} ({name}), sent as Authorization: Bearer",
            )
        if (
            kind == "apiKey"
            and scheme.get("in") in ("header", "cookie")
            and isinstance(scheme.get("name"), str)
        ):
            header = scheme["name"]
            # a header or cookie name is an HTTP token: nothing else reaches a header template
            why = header_problem(header) if scheme["in"] == "header" else None
            if why is None and not HEADER_NAME.fullmatch(header):
                why = "is not a cookie name (letters, digits and !#$%&'*+-.^_`|~ only)"
            if why is not None:
                self.fail(
                    "TN454",
                    f"security scheme {name!r}: the {scheme['in']} name {header!r} {why}",
                    f"{scheme_at}/name",
                )
                raise _Stop
            if scheme["in"] == "header":
                return (
                    header,
                    f"${{{var}}}",
                    var,
                    f"an API key ({name}), sent as the {header} header",
                )
            return (
                "Cookie",
                f"{header}=${{{var}}}",
                var,
                f"an API key ({name}), sent as the cookie {header}",
            )
        return None


def _scheme_kind(scheme: Any) -> str:
    if not isinstance(scheme, dict):
        return "undefined"
    if scheme.get("type") == "apiKey":
        return f"an API key in the {scheme.get('in')}"
    if scheme.get("type") == "http":
        return f"http {scheme.get('scheme')}"
    return str(scheme.get("type"))


def _env_name(scheme: str, prefix: str) -> str:
    """The prefix, then the scheme's name in capitals: bearerAuth -> WEATHER_BEARER_AUTH; words
    the prefix ends with are not repeated (petstore_auth under SWAGGER_PETSTORE ->
    SWAGGER_PETSTORE_AUTH)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", scheme)
    words = [w for w in re.sub(r"[^A-Za-z0-9]+", "_", spaced).upper().split("_") if w]
    head = [w for w in prefix.split("_") if w]
    for size in range(min(len(head), len(words) - 1), 0, -1):
        if head[-size:] == words[:size]:
            words = words[size:]
            break
    return "_".join([*head, *words]) if words else "_".join([*head, "KEY"])


def _origin(url: str) -> str:
    """scheme://host[:port] of a server URL: where a credential header goes."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def _title_prefix(title: str, stem: str) -> str:
    """A variable name prefix from the API's title (before a ' - ' or ':' subtitle, a trailing
    'API' left out: 'Weather API' -> WEATHER), else the file's name, else API."""
    for text in (re.split(r"\s[-\u2013\u2014|:]\s|[:(]", title)[0], stem):
        words = re.sub(r"[^A-Za-z0-9]+", " ", text).upper().split()
        if len(words) > 1 and words[-1] == "API":
            words = words[:-1]
        while len("_".join(words)) > 32 and len(words) > 1:
            words = words[:-1]
        prefix = "_".join(words)[:32].strip("_")
        if prefix:
            return prefix if not prefix[0].isdigit() else f"API_{prefix}"
    return "API"


def tool_name(operation_id: Any, method: str, route: str) -> str:
    """A name every provider accepts: [A-Za-z0-9_], at most 64, from the operationId (else the
    method and path); a cut name ends in a stable hash of the whole."""
    if isinstance(operation_id, str) and operation_id.strip():
        raw = operation_id
    else:
        raw = f"{method}_{route.replace('{', '').replace('}', '').strip('/')}"
    name = re.sub(r"[^A-Za-z0-9_]+", "_", raw).strip("_") or method
    if name[0].isdigit():
        name = f"op_{name}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9].rstrip('_')}_{digest}"
    return name


# -- one operation ----------------------------------------------------------------------------


class _Operation:
    def __init__(
        self,
        reader: _Reader,
        out: OpenApiImport,
        route: str,
        item: dict[str, Any],
        item_at: str,
        method: str,
        op_at: str,
    ) -> None:
        self.reader = reader
        self.out = out
        self.route = route
        self.item = item
        self.item_at = item_at
        self.method = method
        self.op_at = op_at
        self.operation: dict[str, Any] = item[method]
        self.label = f"{method.upper()} {route}"

    def spec(self) -> tuple[str, dict[str, Any]]:
        reader, operation = self.reader, self.operation
        name = tool_name(operation.get("operationId"), self.method, self.route)
        inputs = _Schemas(reader, "input")
        properties: dict[str, Any] = {}
        required: list[str] = []
        base = reader.base_url(self.item, operation, self.op_at, self.item_at)
        absolute = bool(base) and urlsplit(base).scheme in ("http", "https")
        origin = _origin(base) if absolute else "the project's base_url"
        security = reader.security_headers(operation, self.op_at, self.out, origin)
        secured = {header.lower() for header in security}
        params = [  # a header the security scheme sets is not an argument too
            (p, at)
            for p, at in self._parameters()
            if not (p["in"] == "header" and p["name"].lower() in secured)
        ]
        query_names = {p["name"] for p, _ in params if p["in"] == "query"}
        taken = set(query_names)
        url = self.route
        headers: dict[str, str] = {}
        query: list[str] = []
        for param, at in params:
            arg = param["name"]
            if param["in"] != "query":
                if arg in taken:
                    arg = _free(f"{arg}_{param['in']}", taken)
                taken.add(arg)
            schema = self._param_schema(param, at, inputs)
            if param["in"] == "path":
                if f"{{{param['name']}}}" not in url:
                    self.out.notes.append(
                        f"{name}: path parameter {param['name']!r} is not in the path {self.route}; left out"
                    )
                    continue
                url = url.replace(f"{{{param['name']}}}", f"{{{arg}}}")
                schema = self._url_safe(name, arg, schema, inputs)
            elif param["in"] == "header":
                headers[param["name"]] = f"{{{arg}}}"
            else:
                query.append(arg)
            properties[arg] = schema
            if param["in"] == "path" or param.get("required") is True:
                required.append(arg)
        for missing in re.findall(r"\{([^{}]+)\}", url):
            if missing not in properties:  # a path template without its parameter
                properties[missing] = {"type": "string"}
                required.append(missing)
                self.out.notes.append(
                    f"{name}: path parameter {missing!r} is not declared; imported as a string"
                )
        body = self._body(name, inputs, taken)
        if body.flat is not None:
            body_properties, body_required, _ = body.flat
            properties.update(body_properties)
            required += [r for r in body_required if r not in required]
        elif body.arg is not None:
            properties[body.arg] = body.schema
            if body.required:
                required.append(body.arg)
        body_mode, body_arg, flat = body.mode, body.arg, body.flat
        spec: dict[str, Any] = {"name": name, "description": self._description()}
        http: dict[str, Any] = {"method": self.method.upper()}
        if absolute:
            http["url"] = url
            http["base_url"] = base
        else:  # a relative server (or none): relative to the project's base_url
            http["url"] = base + url
            self.out.base_url_hint = base
        if security or headers:
            http["headers"] = {**security, **headers}
        if body_mode != "none" and query:
            http["query"] = query
        default_body = "json" if self.method.upper() in BODY_METHODS else "none"
        if body_mode != default_body:
            http["body"] = body_mode
        if body_arg is not None:
            http["body_arg"] = body_arg
        spec["http"] = http
        if properties:
            schema_out: dict[str, Any] = {"type": "object", "properties": properties}
            if required:
                schema_out["required"] = required
            if flat is not None and flat[2]:
                schema_out["additionalProperties"] = False
            if inputs.defs:
                schema_out["$defs"] = inputs.defs
                _prune(schema_out)
            inputs.check(schema_out, self.op_at)
            spec["input_schema"] = schema_out
        output = self._output()
        if output is not None:
            spec["output_schema"] = output
        annotations = _annotations(self.method)
        if annotations:
            spec["annotations"] = annotations
        return name, spec

    def _description(self) -> str:
        summary = self.operation.get("summary")
        description = self.operation.get("description")
        parts = [
            text.strip()
            for text in (summary, description)
            if isinstance(text, str) and text.strip()
        ]
        if len(parts) == 2 and parts[1].startswith(parts[0]):
            parts = parts[1:]
        text = "\n\n".join(parts) or self.label
        if self.operation.get("deprecated") is True:
            text = f"Deprecated. {text}"
        return text

    def _parameters(self) -> list[tuple[dict[str, Any], str]]:
        """The operation's parameters over its path item's (same name and place: the
        operation's wins), each followed through its $ref."""
        found: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
        for holder, at in ((self.item, self.item_at), (self.operation, self.op_at)):
            listed = holder.get("parameters", [])
            if not isinstance(listed, list):
                self.reader.fail("TN450", "parameters must be a list", f"{at}/parameters")
                raise _Stop
            for index, raw in enumerate(listed):
                param, param_at = self.reader.deref(raw, f"{at}/parameters/{index}")
                param = self.reader.mapping(param, param_at, "a parameter")
                name, place = param.get("name"), param.get("in")
                if not isinstance(name, str) or place not in ("path", "query", "header", "cookie"):
                    self.reader.fail(
                        "TN450",
                        "a parameter needs a name and `in` (path, query, header or cookie)",
                        param_at,
                    )
                    raise _Stop
                found[(name, place)] = (param, param_at)
        kept = []
        tool = tool_name(self.operation.get("operationId"), self.method, self.route)
        for (name, place), (param, at) in found.items():
            if place == "cookie" or (place == "header" and name.lower() in IGNORED_HEADERS):
                if place == "cookie":
                    self.out.notes.append(f"{tool}: cookie parameter {name!r} is not carried")
                continue
            why = header_problem(name) if place == "header" else None
            if why is not None:  # Host, Content-Length, ... or not a header name at all
                self.out.notes.append(f"{tool}: header parameter {name!r} is not carried: it {why}")
                continue
            kept.append((param, at))
        order = {"path": 0, "query": 1, "header": 2}
        return sorted(kept, key=lambda pair: order[pair[0]["in"]])

    def _param_schema(self, param: dict[str, Any], at: str, schemas: _Schemas) -> Any:
        raw, raw_at = param.get("schema"), f"{at}/schema"
        if raw is None and isinstance(param.get("content"), dict) and param["content"]:
            media = next(iter(param["content"]))
            raw = (
                param["content"][media].get("schema")
                if isinstance(param["content"][media], dict)
                else None
            )
            raw_at = f"{at}/content/{escape(media)}/schema"
        schema = schemas.convert(raw, raw_at) if raw is not None else {}
        described = isinstance(param.get("description"), str) and param["description"].strip()
        if described and isinstance(schema, dict):
            if "description" not in schema:
                schema = {**schema, "description": param["description"]}
                schemas.origin[id(schema)] = raw_at
        if param.get("deprecated") is True and isinstance(schema, dict):
            schema.setdefault("deprecated", True)
        return schema

    def _url_safe(self, name: str, arg: str, schema: Any, schemas: _Schemas) -> Any:
        """A path parameter is a URL segment: a string or an integer (else imported as a string)."""
        kinds = schemas.kinds(schema)
        if kinds and kinds <= {"string", "integer"}:
            return schema
        self.out.notes.append(
            f"{name}: path parameter {arg!r} is not a string or an integer; imported as a string"
        )
        kept = {"type": "string"}
        if isinstance(schema, dict) and isinstance(schema.get("description"), str):
            kept["description"] = schema["description"]
        return kept

    def _body(self, name: str, schemas: _Schemas, taken: set[str]) -> _Body:
        """How the request body joins the arguments."""
        raw = self.operation.get("requestBody")
        if raw is None:
            return _Body("none")
        body, body_at = self.reader.deref(raw, f"{self.op_at}/requestBody")
        body = self.reader.mapping(body, body_at, "requestBody")
        needed = body.get("required") is True
        content = body.get("content", {})
        if not isinstance(content, dict):
            self.reader.fail("TN450", "requestBody.content must be an object", f"{body_at}/content")
            raise _Stop
        media, mode = _body_media(content)
        if media is None or self.method.upper() in ("GET", "HEAD"):
            kinds = ", ".join(content) or "none"
            why = (
                f"a {self.method.upper()} request sends no body"
                if media
                else f"its body is {kinds}"
            )
            if needed:
                self.out.notes.append(
                    f"{name}: not imported: {why} (JSON and urlencoded form bodies are carried)"
                )
                raise _Stop
            self.out.notes.append(f"{name}: its optional request body is not carried ({why})")
            return _Body("none")
        media_object = content[media] if isinstance(content[media], dict) else {}
        schema_at = f"{body_at}/content/{escape(media)}/schema"
        raw_schema = media_object.get("schema", {})
        schema = schemas.convert(raw_schema, schema_at)
        if isinstance(body.get("description"), str) and isinstance(schema, dict):
            if "$ref" not in schema:  # beside a $ref it would be lost to strict modes' rules
                schema.setdefault("description", body["description"])
        plain = schemas.plain_object(schema)
        if plain is not None:
            properties, body_required, closed = plain
            clash = set(properties) & taken
            if not clash and (needed or not body_required):
                return _Body(mode, flat=(properties, body_required, closed))
        arg = _free("body", taken)
        taken.add(arg)
        return _Body(mode, arg=arg, schema=schema, required=needed)

    def _output(self) -> dict[str, Any] | None:
        responses = self.operation.get("responses", {})
        if not isinstance(responses, dict):
            self.reader.fail("TN450", "responses must be an object", f"{self.op_at}/responses")
            raise _Stop
        codes = sorted(c for c in map(str, responses) if re.fullmatch(r"2\d\d", c))
        codes += [c for c in map(str, responses) if c.upper() == "2XX"]
        for code in codes[:1]:
            response, at = self.reader.deref(
                responses[code], join_pointer(f"{self.op_at}/responses", code)
            )
            response = self.reader.mapping(response, at, f"response {code}")
            content = response.get("content", {})
            if not isinstance(content, dict):
                return None
            media, mode = _body_media(content)
            if media is None or mode != "json" or not isinstance(content[media], dict):
                return None
            if "schema" not in content[media]:
                return None
            outputs = _Schemas(self.reader, "output")
            schema_at = f"{at}/content/{escape(media)}/schema"
            schema = outputs.object_root(content[media]["schema"], schema_at)
            if schema is None:
                outputs.check_loops()  # said even when no output schema is made
                return None
            if outputs.defs:
                schema = {**schema, "$defs": {**schema.get("$defs", {}), **outputs.defs}}
                _prune(schema)
            outputs.check(schema, self.op_at)
            return schema
        return None


@dataclass
class _Body:
    """How an operation's request body joins the arguments: flattened (its properties become
    arguments), or one argument `arg` holding `schema`, or none."""

    mode: str  # json | form | none
    flat: tuple[dict[str, Any], list[str], bool] | None = None  # properties, required, closed
    arg: str | None = None
    schema: Any = None
    required: bool = False


def _body_media(content: dict[str, Any]) -> tuple[str | None, str]:
    """The media type a body is sent or read as, and its mode: JSON first, then a form."""
    for media in content:
        if media.split(";")[0].strip().lower() == "application/json":
            return media, "json"
    for media in content:
        if re.match(r"^application/[\w.+-]*\+json\b", media.lower()):
            return media, "json"
    for media in content:
        if media.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
            return media, "form"
    for media in content:
        if media.strip() in ("*/*", "application/*"):
            return media, "json"
    return None, "none"


def _free(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    return candidate


def _annotations(method: str) -> dict[str, Any]:
    return {
        "get": {"readOnlyHint": True},
        "head": {"readOnlyHint": True},
        "put": {"idempotentHint": True},
        "delete": {"destructiveHint": True, "idempotentHint": True},
    }.get(method, {})


# -- schemas ----------------------------------------------------------------------------------


class _Schemas:
    """OpenAPI schemas made JSON Schema 2020-12, for one tool's input or output: every local
    $ref reached is copied (converted) into `defs`."""

    def __init__(self, reader: _Reader, direction: str) -> None:
        self.reader = reader
        self.direction = direction
        self.defs: dict[str, Any] = {}
        self.names: dict[str, str] = {}  # pointer in the document -> name in defs
        self.origin: dict[int, str] = {}  # id of a converted node -> its pointer in the document

    def convert(self, node: Any, pointer: str) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            self.reader.fail("TN450", "a schema must be an object", pointer)
            raise _Stop
        out: dict[str, Any] = {}
        self.origin[id(out)] = pointer
        if "$ref" in node:
            out["$ref"] = self._ref(node["$ref"], pointer)
            if self.reader.v30:  # OpenAPI 3.0: "this object cannot be extended", siblings ignored
                return out
        for key, value in node.items():
            if key == "$ref" or key in DROPPED or key.startswith("x-"):
                continue
            where = join_pointer(pointer, key)
            if key in ONE_SCHEMA and isinstance(value, (dict, bool)):
                out[key] = self.convert(value, where)
            elif key in SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.convert(v, join_pointer(where, i)) for i, v in enumerate(value)]
            elif key in SCHEMA_MAPS and isinstance(value, dict):
                out[key] = (
                    self._properties(value, where)
                    if key == "properties"
                    else {k: self.convert(v, join_pointer(where, k)) for k, v in value.items()}
                )
            else:
                out[key] = value
        if key_bool(node, "exclusiveMinimum"):
            _exclusive(out, "exclusiveMinimum", "minimum")
        if key_bool(node, "exclusiveMaximum"):
            _exclusive(out, "exclusiveMaximum", "maximum")
        if "example" in node and "examples" not in out:
            out["examples"] = [node["example"]]
        if "properties" in out and isinstance(out.get("required"), list):
            out["required"] = [
                r for r in out["required"] if r in out["properties"] or not self._dropped(node, r)
            ]
        if node.get("nullable") is True:
            return self._nullable(out, pointer)
        return out

    def _properties(self, properties: dict[str, Any], pointer: str) -> dict[str, Any]:
        hidden = "readOnly" if self.direction == "input" else "writeOnly"
        return {
            name: self.convert(value, join_pointer(pointer, name))
            for name, value in properties.items()
            if not (isinstance(value, dict) and value.get(hidden) is True)
        }

    def _dropped(self, node: dict[str, Any], name: str) -> bool:
        hidden = "readOnly" if self.direction == "input" else "writeOnly"
        value = node.get("properties", {}).get(name)
        return isinstance(value, dict) and value.get(hidden) is True

    def _nullable(self, out: dict[str, Any], pointer: str) -> dict[str, Any]:
        if not set(out) - ANNOTATIONS:
            return out  # any value already, null included
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list):
            if "null" not in kind:
                out["type"] = [*kind, "null"]
        else:
            notes: dict[str, Any] = {
                k: out.pop(k) for k in ("description", "title", "default") if k in out
            }
            wrapped: dict[str, Any] = {"anyOf": [out, {"type": "null"}], **notes}
            self.origin[id(wrapped)] = pointer
            return wrapped
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out

    def _ref(self, ref: Any, pointer: str) -> str:
        target, target_at = self.reader.lookup(ref, pointer)
        name = self.names.get(target_at)
        if name is None:
            name = self._name_for(target_at)
            self.names[target_at] = name
            self.defs[name] = {}  # reserved: a schema may reach itself
            self.defs[name] = self.convert(target, target_at)
        return f"#/$defs/{escape(name)}"

    def _name_for(self, pointer: str) -> str:
        """A $defs name for what `pointer` holds: a component's own name (after its last dot,
        as in io.k8s.api.core.v1.Pod, which model generators would read as a module path),
        else the pointer's last steps; made unique within the tool."""
        prefix = "/components/schemas/"
        if pointer.startswith(prefix) and "/" not in pointer[len(prefix) :]:
            base = pointer[len(prefix) :].replace("~1", "/").replace("~0", "~").rsplit(".", 1)[-1]
        else:
            tokens = [t for t in pointer.split("/") if t and not t.isdigit()]
            base = "_".join(tokens[-3:])
        base = re.sub(r"[^A-Za-z0-9_]+", "_", base).strip("_") or "schema"
        return _free(base, set(self.defs))

    def resolve(self, schema: Any) -> Any:
        """A schema followed through its $refs into defs."""
        for _ in range(16):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                return schema
            ref = schema["$ref"]
            name = ref.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~")
            schema = self.defs.get(name)
        return None

    def kinds(self, schema: Any) -> set[str]:
        schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return set()
        kind = schema.get("type")
        if isinstance(kind, str):
            return {kind}
        if isinstance(kind, list):
            return set(kind)
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            names = {bool: "boolean", int: "integer", float: "number", str: "string"}
            return {names.get(type(v), "other") for v in schema["enum"]}
        return set()

    def plain_object(self, schema: Any) -> tuple[dict[str, Any], list[str], bool] | None:
        """(properties, required, closed) of a body that can become arguments, else None."""
        schema = self.resolve(schema)
        if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
            return None
        if schema.get("type", "object") != "object" or not schema["properties"]:
            return None
        if any(
            k in schema
            for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "patternProperties")
        ):
            return None
        extra = schema.get("additionalProperties")
        if extra not in (None, False):
            return None
        required = [r for r in schema.get("required", []) if r in schema["properties"]]
        return dict(schema["properties"]), required, extra is False

    def object_root(self, raw: Any, pointer: str) -> dict[str, Any] | None:
        """An output schema whose root says `type: object` (MCP's rule), or None when the
        response is not an object."""
        schema = self.convert(raw, pointer)
        root = schema
        if (
            isinstance(schema, dict)
            and set(schema) <= {"$ref", "description", "title"}
            and "$ref" in schema
        ):
            root = self.resolve(schema)
            if isinstance(root, dict):
                root = {**root, **{k: v for k, v in schema.items() if k != "$ref"}}
        if not isinstance(root, dict):
            return None
        kind = root.get("type")
        if kind == "object":
            return root
        if kind is None and ("properties" in root or self._all_objects(root.get("allOf"))):
            return {"type": "object", **root}
        return None

    def _all_objects(self, branches: Any, seen: frozenset[int] = frozenset()) -> bool:
        if not isinstance(branches, list) or not branches:
            return False
        for branch in branches:
            resolved = self.resolve(branch)
            if not isinstance(resolved, dict) or id(resolved) in seen:  # a loop says nothing
                return False
            if resolved.get("type") != "object" and not (
                "properties" in resolved
                or self._all_objects(resolved.get("allOf"), seen | {id(resolved)})
            ):
                return False
        return True

    def check_loops(self) -> None:
        """TN451 for a schema that reaches itself through $ref, allOf, anyOf, oneOf, not or
        if/then/else only (`A: {allOf: [{$ref: A}]}`): it constrains nothing, and a validator
        applying it to a value would never finish."""
        graph = {name: set(_in_place_refs(node)) for name, node in self.defs.items()}
        done: set[str] = set()
        for start in graph:
            path: list[str] = []
            stack = [(start, iter(sorted(graph[start])))]
            on_path = {start}
            path.append(start)
            while stack:
                name, following = stack[-1]
                step = next(following, None)
                if step is None:
                    stack.pop()
                    on_path.discard(path.pop())
                    done.add(name)
                    continue
                if step in on_path:
                    loop = [*path[path.index(step) :], step]
                    pointers = {v: k for k, v in self.names.items()}
                    chain = " -> ".join(f"#{pointers.get(n, n)}" for n in loop)
                    self.reader.fail(
                        "TN451",
                        f"this schema reaches itself with nothing in between ({chain}, through "
                        "$ref, allOf, anyOf, oneOf, not or if/then/else only): it constrains "
                        "nothing, and a validator would never finish",
                        pointers.get(step, ""),
                    )
                    raise _Stop
                if step in graph and step not in done:
                    stack.append((step, iter(sorted(graph[step]))))
                    on_path.add(step)
                    path.append(step)

    def check(self, schema: dict[str, Any], op_at: str) -> None:
        """The converted schema is valid JSON Schema, else TN453 where its part came from (and
        no schema reaches itself with nothing in between, TN451)."""
        self.check_loops()
        before = len(self.reader.problems)
        for error in self.reader.meta.errors(schema):
            node: Any = schema
            where = self.origin.get(id(schema), op_at)
            for part in error.path:
                try:
                    node = node[part]
                except (KeyError, IndexError, TypeError):
                    break
                where = self.origin.get(id(node), where)
            keyword = str(error.path[-1]) if error.path else "schema"
            self.reader.fail(
                "TN453",
                f"{keyword}: not valid JSON Schema once converted: {error.message}",
                where,
            )
        if len(self.reader.problems) > before:
            raise _Stop


def _in_place_refs(schema: Any) -> Iterator[str]:
    """The $defs names a schema applies to the same value it is given (not to its items or
    properties)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield unescape(ref[len("#/$defs/") :])
        stack.extend(node[k] for k in ("not", "if", "then", "else") if k in node)
        for keyword in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(keyword), list):
                stack.extend(node[keyword])
        if isinstance(node.get("dependentSchemas"), dict):
            stack.extend(node["dependentSchemas"].values())


def _prune(schema: dict[str, Any]) -> None:
    """Drop the $defs nothing reaches any more (a root $ref inlined into an output schema)."""
    defs = schema["$defs"]
    reached: set[str] = set()
    stack: list[Any] = [{k: v for k, v in schema.items() if k != "$defs"}]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
                if name not in reached and name in defs:
                    reached.add(name)
                    stack.append(defs[name])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    for name in [n for n in defs if n not in reached]:
        del defs[name]
    if not defs:
        del schema["$defs"]


def key_bool(node: dict[str, Any], key: str) -> bool:
    return isinstance(node.get(key), bool)


def _exclusive(out: dict[str, Any], key: str, bound: str) -> None:
    """OpenAPI 3.0's boolean exclusiveMinimum/Maximum as JSON Schema's numeric one."""
    if out.get(key) is True and bound in out:
        out[key] = out.pop(bound)
    else:
        out.pop(key, None)
