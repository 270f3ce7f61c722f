"""One operation as one spec: its arguments (path, query and header parameters and the request
body, in one flat object), how each is sent (the `http` binding, with OpenAPI's serialisation
styles), its output schema, annotations and groups.

- Path, query and header parameters keep their names (Accept, Content-Type and Authorization
  header parameters are ignored, as OpenAPI says; cookie parameters and credentials are not
  carried). A path or header parameter whose name a query parameter already has becomes
  `<name>_path` or `<name>_header`.
- A parameter's `style` and `explode` (or its `content`, sent as JSON text) go into
  `http.styles` when its value can be a list or an object; a form body's `encoding` into
  `http.encoding` (OpenAPI's defaults written out: form, exploded).
- The JSON (or urlencoded or multipart form) body joins them: its properties become arguments
  when it is a plain object whose property names no parameter uses; otherwise the whole body is
  one argument, `body`. A multipart body's binary fields are file parts (`http.parts`).
- A body of another single media type is one string argument, `body`, sent as that type: its
  text (`body: text`, for text/*, XML, JWT, YAML, ...: toolspec.http.text_media_type) or the
  bytes of its base64 text (`body: binary`, anything else); a body of any type (`*/*`, or an
  empty key) is JSON, or bytes when its schema is a string. Chosen in that order: JSON, form,
  multipart, any, text, bytes. A body the runtime cannot send (a range such as image/*, a key
  that is no media type, a form that is no object) means the operation is skipped and the
  summary says so (an optional one is left out).
- The output schema is the JSON schema of the first 2xx response, when it is an object; a
  response that is never an object (an array, a string) is wrapped as MCP wraps such a result,
  `{"type": "object", "properties": {"result": ...}, "required": ["result"]}` (the runtime's
  MCP server sends it so). Past the schema budget (schemas.BUDGET, counted with the shared
  schemas reached) the arguments skip the operation (TN472) and the result is left out (TN473).
- Annotations: readOnlyHint for GET and HEAD, idempotentHint for PUT and DELETE,
  destructiveHint for DELETE. Groups: the operation's tags. A deprecated operation is a
  deprecated spec (and says so in its description); a deprecated parameter's argument is
  `deprecated: true`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolnexus_gen.sources.openapi.document import At, Skip
from toolnexus_gen.sources.openapi.naming import argument_name, free, group_name, tool_name
from toolnexus_gen.sources.openapi.schemas import BUDGET, INPUT, OUTPUT, Converter
from toolnexus_gen.toolspec.http import (
    MEDIA_TYPE,
    RAW_BODIES,
    charset,
    essence,
    header_problem,
    json_media_type,
    raw_media_type_problem,
    text_media_type,
)

BODY_METHODS = ("POST", "PUT", "PATCH")  # where the binding's default body is json
IGNORED_HEADERS = {"accept", "content-type", "authorization"}  # OpenAPI: SHALL be ignored
SCALARS = {"string", "integer", "number", "boolean", "null"}
ANY_MEDIA = ("*/*", "application/*", "")  # a body of any type: JSON, or bytes for a string
# media types whose body is bytes whatever its schema says (Azure writes `type: object, format:
# file` for an image stream); under another type an object schema is a structure no body mode
# writes (Mastodon's application/form-data): skipped
BINARY_KINDS = ("image/", "audio/", "video/", "font/", "model/", "application/octet-stream")
EXAMPLE_TEXT = 1_000  # characters of a text body's example kept in its argument's schema
FIELDS_SHOWN = 20  # the top-level fields of a text body's object schema named to the model
DEFAULT_STYLE = {"query": "form", "path": "simple", "header": "simple"}


@dataclass
class Body:
    """How an operation's request body joins the arguments: flattened (its properties become
    arguments), or one argument `arg` holding `schema`, or none."""

    mode: str  # json | form | multipart | text | binary | none
    flat: tuple[dict[str, Any], list[str], bool] | None = None  # properties, required, closed
    arg: str | None = None
    schema: Any = None
    required: bool = False
    encoding: dict[str, dict[str, Any]] | None = None
    content_type: str | None = None  # a JSON body's, when not application/json; a raw body's
    parts: dict[str, dict[str, Any]] | None = None  # how multipart fields are sent


class Operation:
    def __init__(
        self,
        reader: Any,  # the package's Reader (imports this module: not imported back)
        route: str,
        item: dict[str, Any],
        item_at: At,
        method: str,
        operation: dict[str, Any],
        op_at: At,
    ) -> None:
        self.reader = reader
        self.route = route
        self.item, self.item_at = item, item_at
        self.method = method
        self.operation, self.op_at = operation, op_at
        self.name = tool_name(operation.get("operationId"), method, route)
        self.notes: list[str] = []
        self.credential_params = False  # a parameter carries a credential (not an argument)
        self.sends_no_credentials = False  # ... and no header of the import sends one
        self.result_left_out: Skip | None = None  # why its result schema is not in its spec
        self.raw_body: str | None = None  # a text or binary body: its media type, as sent

    def note(self, text: str) -> None:
        self.notes.append(f"{self.name}: {text}")

    def spec(self) -> dict[str, Any]:
        reader, operation = self.reader, self.operation
        inputs = Converter(reader.shared, INPUT)
        properties: dict[str, Any] = {}
        required: list[str] = []
        base = reader.base_url(self.item, operation, self.op_at, self.item_at)
        absolute = bool(base) and urlsplit(base).scheme in ("http", "https")
        origin = _origin(base) if absolute else "the project's base_url"
        security = reader.security.headers(operation, self.op_at, origin)
        security = reader.login_header(base, origin, security)
        secured = {header.lower() for header in security}
        params = [  # a header the security scheme sets is not an argument too
            (p, at)
            for p, at in self._parameters()
            if not (p["in"] == "header" and p["name"].lower() in secured)
        ]
        self.sends_no_credentials = self.credential_params and not security
        query_names = {p["name"] for p, _ in params if p["in"] == "query"}
        taken = set(query_names)
        url = self.route.partition("#")[0]  # a fragment is never sent (Box names variants so)
        headers: dict[str, str] = {}
        query: list[str] = []
        styles: dict[str, dict[str, Any]] = {}
        names: dict[str, str] = {}  # argument -> its name on the wire, where they differ
        for param, at in params:
            arg, place = param["name"], param["in"]
            if place != "query":
                if arg in taken:
                    arg = free(f"{arg}_{place}", taken)
                taken.add(arg)
            safe = argument_name(arg, taken | set(properties))
            if safe != arg:
                if place == "query":
                    names[safe] = arg
                arg = safe
                taken.add(arg)
            schema, style = self._param_schema(param, at, inputs)
            if place == "path":
                if f"{{{param['name']}}}" not in url:
                    self.note(f"path parameter {param['name']!r} is not in the path; left out")
                    continue
                url = url.replace(f"{{{param['name']}}}", f"{{{arg}}}")
                schema = self._single(arg, schema, inputs, {"string", "integer"}, "path")
                if style and style["style"] == "simple":
                    style = None  # a string or an integer: simple is the text itself
            elif place == "header":
                if "object" in inputs.kinds(schema):
                    self._object_header(param)
                    continue
                headers[param["name"]] = f"{{{arg}}}"
                schema = self._single(arg, schema, inputs, SCALARS | {"array"}, "header")
            else:
                query.append(arg)
            if style is not None:
                styles[arg] = style
            properties[arg] = schema
            if place == "path" or param.get("required") is True:
                required.append(arg)
        for missing in re.findall(r"\{([^{}]+)\}", url):
            if missing not in properties:  # a path template without its parameter
                properties[missing] = {"type": "string"}
                required.append(missing)
                self.note(f"path parameter {missing!r} is not declared; imported as a string")
        body = self._body(inputs, taken)
        if body.flat is not None:
            body_properties, body_required, _ = body.flat
            renamed: dict[str, str] = {}  # field -> argument
            for field in body_properties:
                renamed[field] = argument_name(field, taken | set(properties))
                if renamed[field] != field:
                    names[renamed[field]] = field
                taken.add(renamed[field])
            properties.update({renamed[k]: v for k, v in body_properties.items()})
            required += [renamed[r] for r in body_required if renamed[r] not in required]
            if body.encoding:
                body.encoding = {renamed.get(k, k): v for k, v in body.encoding.items()}
            if body.parts:
                body.parts = {renamed.get(k, k): v for k, v in body.parts.items()}
        elif body.arg is not None:
            properties[body.arg] = body.schema
            if body.required:
                required.append(body.arg)
        spec: dict[str, Any] = {"name": self.name, "description": self._description()}
        http: dict[str, Any] = {"method": self.method.upper()}
        if absolute:
            http["url"] = url
            http["base_url"] = base
        else:  # a relative server (or none): relative to the project's base_url
            http["url"] = base + url
            reader.base_url_hint = base
        if security or headers:
            http["headers"] = {**security, **headers}
        if body.mode != "none" and query:
            http["query"] = query
        default_body = "json" if self.method.upper() in BODY_METHODS else "none"
        if body.mode != default_body:
            http["body"] = body.mode
        if body.arg is not None:
            http["body_arg"] = body.arg
        if body.content_type is not None:
            http["content_type"] = body.content_type
        if styles:
            http["styles"] = styles
        if body.encoding:
            http["encoding"] = body.encoding
        if body.parts:
            http["parts"] = body.parts
        if names:
            http["names"] = names
        spec["http"] = http
        if properties:
            schema_out: dict[str, Any] = {"type": "object", "properties": properties}
            if required:
                schema_out["required"] = required
            if body.flat is not None and body.flat[2]:
                schema_out["additionalProperties"] = False
            inputs.check(schema_out)
            self._within_budget(schema_out)
            spec["input_schema"] = schema_out
        output = self._output()
        if output is not None:
            spec["output_schema"] = output
        annotations = _annotations(self.method)
        if annotations:
            spec["annotations"] = annotations
        if self.operation.get("deprecated") is True:  # `breaking` reads it at a later revision
            spec["deprecated"] = True
        groups = self._groups()
        if groups:
            spec["groups"] = groups
        return spec

    def _within_budget(self, schema: dict[str, Any]) -> None:
        size, count = self.reader.shared.size(schema)
        if size > BUDGET[INPUT]:
            at = self.op_at.join("requestBody") if "requestBody" in self.operation else self.op_at
            raise Skip(
                "TN472",
                f"its arguments' schema holds {size:,} bytes of JSON Schema with the {count} "
                f"shared schemas it reaches (the budget is {BUDGET[INPUT]:,}): every provider "
                "entry would carry all of it; write a spec of your own with a narrower body",
                at,
            )

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
        text = "\n\n".join(parts) or f"{self.method.upper()} {self.route}"
        if self.operation.get("deprecated") is True:
            text = f"Deprecated. {text}"
        return text

    def _groups(self) -> list[str]:
        """The operation's tags; without any, the first word of its path that is not a
        version (`/v1/customers/{id}` is in `customers`), so untagged documents group too."""
        tags = self.operation.get("tags")
        found: list[str] = []
        for tag in tags if isinstance(tags, list) else ():
            group = group_name(tag) if isinstance(tag, str) else None
            if group and group not in found:
                found.append(group)
        if not found:
            for word in self.route.partition("#")[0].split("/"):
                if word and "{" not in word and not re.fullmatch(r"v\d+(\.\d+)*|api", word):
                    group = group_name(word)
                    return [group] if group else []
        return found

    def _parameters(self) -> list[tuple[dict[str, Any], At]]:
        """The operation's parameters over its path item's (same name and place: the
        operation's wins), each followed through its $ref."""
        files = self.reader.files
        found: dict[tuple[str, str], tuple[dict[str, Any], At]] = {}
        for holder, at in ((self.item, self.item_at), (self.operation, self.op_at)):
            listed = holder.get("parameters", [])
            if not isinstance(listed, list):
                raise Skip("TN450", "parameters must be a list", at.join("parameters"))
            for index, raw in enumerate(listed):
                param, param_at = files.deref(raw, at.join("parameters", index))
                if not isinstance(param, dict):
                    raise Skip("TN450", "a parameter must be an object", param_at)
                name, place = param.get("name"), param.get("in")
                if not isinstance(name, str) or place not in ("path", "query", "header", "cookie"):
                    raise Skip(
                        "TN450",
                        "a parameter needs a name and `in` (path, query, header or cookie)",
                        param_at,
                    )
                found[(name, place)] = (param, param_at)
        kept = []
        security = self.reader.security
        for (name, place), (param, at) in found.items():
            if place == "cookie":
                self.note(f"cookie parameter {name!r} is not carried")
                continue
            if place == "header" and name.lower() in IGNORED_HEADERS:
                self.credential_params |= name.lower() == "authorization"
                continue
            if security.is_credential(place, name):
                self.reader.credentials.setdefault((place, name), []).append(self.name)
                self.credential_params = True
                continue
            why = header_problem(name) if place == "header" else None
            if why is not None:  # Host, Content-Length, ... or not a header name at all
                self.note(f"header parameter {name!r} is not carried: it {why}")
                continue
            kept.append((param, at))
        order = {"path": 0, "query": 1, "header": 2}
        return sorted(kept, key=lambda pair: order[pair[0]["in"]])

    def _param_schema(
        self, param: dict[str, Any], at: At, inputs: Converter
    ) -> tuple[Any, dict[str, Any] | None]:
        """The parameter's argument schema, and how its value is written when that matters."""
        place = param["in"]
        raw, raw_at = param.get("schema"), at.join("schema")
        style: dict[str, Any] | None = None
        if raw is None and isinstance(param.get("content"), dict) and param["content"]:
            media = next(iter(param["content"]))
            holder = param["content"][media]
            raw = holder.get("schema") if isinstance(holder, dict) else None
            raw_at = at.join("content", media, "schema")
            style = {"style": "json"}
        schema = inputs.convert(raw, raw_at) if raw is not None else {}
        if style is None:
            kind = param.get("style", DEFAULT_STYLE[place])
            explode = param.get("explode", kind == "form")
            kinds = inputs.kinds(schema)
            if not isinstance(kind, str) or not isinstance(explode, bool):
                raise Skip("TN450", "style must be a string and explode a boolean", at)
            if not kinds <= SCALARS or not kinds or kind != DEFAULT_STYLE[place]:
                style = {"style": kind, "explode": explode}
        described = isinstance(param.get("description"), str) and param["description"].strip()
        if described and isinstance(schema, dict) and "description" not in schema:
            schema = {**schema, "description": param["description"]}
            inputs.origin[id(schema)] = raw_at
        if param.get("deprecated") is True and isinstance(schema, dict):
            schema.setdefault("deprecated", True)
        return schema, style

    def _object_header(self, param: dict[str, Any]) -> None:
        """An object-valued header is left out: no model writes the key=value text its server
        parses as the document means, and a value it cannot carry would be refused at call time."""
        needed = (
            " (required: give it with the Toolkit's http_client headers)"
            if param.get("required") is True
            else ""
        )
        self.note(f"header parameter {param['name']!r} takes an object; left out{needed}")

    def _single(
        self, arg: str, schema: Any, inputs: Converter, allowed: set[str], place: str
    ) -> Any:
        """A path or header value of the kinds the binding takes (else imported as a string)."""
        kinds = inputs.kinds(schema)
        if kinds and kinds <= allowed:
            return schema
        self.note(f"{place} parameter {arg!r} has no type a {place} carries; imported as a string")
        kept = {"type": "string"}
        if isinstance(schema, dict) and isinstance(schema.get("description"), str):
            kept["description"] = schema["description"]
        return kept

    def _body(self, inputs: Converter, taken: set[str]) -> Body:
        """How the request body joins the arguments."""
        raw = self.operation.get("requestBody")
        if raw is None:
            return Body("none")
        body, body_at = self.reader.files.deref(raw, self.op_at.join("requestBody"))
        if not isinstance(body, dict):
            raise Skip("TN450", "requestBody must be an object", body_at)
        needed = body.get("required") is True
        content = body.get("content", {})
        if not isinstance(content, dict):
            raise Skip("TN450", "requestBody.content must be an object", body_at.join("content"))
        media, mode = body_media(content)
        if media is None:
            media, mode = raw_media(content)
        why = None
        if media is None:
            shown = ", ".join(repr(m) if not m.strip() else m for m in content)
            ranges = content and all(re.fullmatch(r"[\w.+-]+/\*", essence(m)) for m in content)
            why = f"its body is {shown or 'empty'}" + (
                " (a media range: no one type the request could declare)" if ranges else ""
            )
        elif self.method.upper() in ("GET", "HEAD"):
            why = f"a {self.method.upper()} request sends no body"
        else:
            assert media is not None
            media_object = content[media] if isinstance(content[media], dict) else {}
            schema_at = body_at.join("content", media, "schema")
            shape = self._shape(media_object.get("schema"), schema_at)
            if mode == "json" and essence(media) in ANY_MEDIA and shape == "string":
                mode = "binary"  # any type, and a string: bytes, as application/octet-stream
            elif (
                mode == "binary"
                and shape == "object"
                and not essence(media).startswith(BINARY_KINDS)
            ):
                why = f"its body is {media}, an object in a form the runtime does not write"
        if why is None and mode in RAW_BODIES:
            assert media is not None
            return self._raw_body(body, body_at, media, mode, needed, taken)
        if why is None:
            assert media is not None
            media_object = content[media] if isinstance(content[media], dict) else {}
            schema_at = body_at.join("content", media, "schema")
            schema = inputs.convert(media_object.get("schema", {}), schema_at)
            plain = inputs.plain_object(schema)
            if mode != "json" and plain is None and inputs.kinds(schema) != {"object"}:
                why = f"its {mode} body is not an object with properties"
        if why is not None and self.method.upper() in ("GET", "HEAD") and not needed:
            return Body("none")  # Stripe declares an empty form body on every GET: nothing lost
        if why is not None:
            if needed:
                raise Skip(
                    "TN471",
                    f"not imported: {why}; the runtime sends JSON, urlencoded and multipart "
                    "form bodies, text and bytes of one media type",
                    body_at,
                )
            self.note(f"its optional request body is not carried ({why})")
            return Body("none")
        if isinstance(body.get("description"), str) and isinstance(schema, dict):
            if "$ref" not in schema:  # beside a $ref it would be lost to strict modes' rules
                schema.setdefault("description", body["description"])
        encoding = self._encoding(media_object, plain, inputs) if mode == "form" else None
        content_type = self._content_type(media) if mode == "json" and media else None
        parts = (
            multipart_parts(media_object, plain, inputs.shared.resolve)
            if mode == "multipart"
            else None
        )
        if plain is not None:
            properties, body_required, closed = plain
            if not set(properties) & taken and (needed or not body_required):
                return Body(
                    mode,
                    flat=(properties, body_required, closed),
                    encoding=encoding,
                    content_type=content_type,
                    parts=parts,
                )
        arg = free("body", taken)
        taken.add(arg)
        return Body(
            mode,
            arg=arg,
            schema=schema,
            required=needed,
            encoding=encoding,
            content_type=content_type,
            parts=parts,
        )

    def _shape(self, node: Any, at: At) -> str:
        """What a body's schema plainly is, read without converting it (a text or binary body
        keeps none of it): "string", "object" or "other"."""
        try:
            node, _ = self.reader.files.deref(node, at)
        except Skip:
            return "other"
        if not isinstance(node, dict):
            return "other"
        kind = node.get("type")
        kinds = set(kind) - {"null"} if isinstance(kind, list) else {kind}
        if kinds == {"string"} or (kind is None and node.get("format") in ("binary", "byte")):
            return "string"
        if kinds == {"object"} or (kind is None and "properties" in node):
            return "object"
        return "other"

    def _raw_body(
        self,
        body: dict[str, Any],
        body_at: At,
        media: str,
        mode: str,
        needed: bool,
        taken: set[str],
    ) -> Body:
        """A text or binary body: one string argument `body`, its text sent as it is (text) or
        its base64 text decoded (binary), as the document's media type. The document's schema
        describes the body, not the argument: its description and a text example are kept."""
        media_object = body["content"][media]
        media_object = media_object if isinstance(media_object, dict) else {}
        schema_at = body_at.join("content", media, "schema")
        bare = essence(media)
        declared = media.strip()
        if bare in ANY_MEDIA:
            declared = "application/octet-stream"
        elif bare == "text/*":
            declared = "text/plain"
        named = charset(declared) if mode == "text" else None
        if named is not None and named.lower() not in ("utf-8", "utf8"):
            declared = f"{declared.split(';', 1)[0].strip()}; charset=utf-8"
            self.note(f"its body, {media!r}, is sent as UTF-8 text: {declared}")
        why = raw_media_type_problem(declared, mode)
        if why is not None and raw_media_type_problem(bare, mode) is None:
            declared, why = bare, None  # `text/plain; utf-8`: parameters no header carries
            self.note(f"its body's media type {media!r} has malformed parameters: sent as {bare}")
        if why is not None:
            if needed:
                raise Skip(
                    "TN471",
                    f"not imported: its body's media type {media!r} {why}",
                    body_at,
                )
            self.note(f"its optional request body is not carried (its media type {why})")
            return Body("none")
        raw = media_object.get("schema")
        try:
            resolved, _ = self.reader.files.deref(raw, schema_at)
        except Skip:
            resolved = None
        resolved = resolved if isinstance(resolved, dict) else {}
        texts = [body.get("description"), resolved.get("description")]
        said = [t.strip() for t in texts if isinstance(t, str) and t.strip()]
        fields = resolved.get("properties")
        if mode == "text" and isinstance(fields, dict) and fields:
            names = [str(name) for name in fields][:FIELDS_SHOWN]
            more = f" and {len(fields) - FIELDS_SHOWN} more" if len(fields) > FIELDS_SHOWN else ""
            said.append(f"Its fields, as the API documents them: {', '.join(names)}{more}.")
        if mode == "text":
            said.append(f"The request body: {bare} text, sent as written.")
        else:
            said.append(f"The request body: the bytes sent ({bare}), in base64.")
        schema: dict[str, Any] = {"type": "string", "description": "\n\n".join(dict.fromkeys(said))}
        if mode == "binary":
            schema["contentEncoding"] = "base64"
        example = media_object.get("example", resolved.get("example"))
        if mode == "text" and isinstance(example, str) and 0 < len(example) <= EXAMPLE_TEXT:
            schema["examples"] = [example]
        arg = free("body", taken)
        taken.add(arg)
        self.raw_body = f"{declared}{', base64' if mode == 'binary' else ''}"
        return Body(mode, arg=arg, schema=schema, required=needed, content_type=declared)

    def _content_type(self, media: str) -> str | None:
        """The media type a JSON body is sent as, when the document's is not application/json
        (a `+json` type: servers of JSON Patch or JSON:API refuse application/json, 415);
        its parameters are not sent (JSON:API refuses most)."""
        bare = essence(media)
        if bare in ("application/json", *ANY_MEDIA):
            return None
        if json_media_type(bare):
            return bare
        self.note(
            f"request body media type {media!r} is not sendable as is; sent as application/json"
        )
        return None

    def _encoding(
        self, media: dict[str, Any], plain: Any, inputs: Converter
    ) -> dict[str, dict[str, Any]]:
        """How each form property is written: the document's Encoding Object, and OpenAPI's
        default (form, exploded) written out for a property that can be a list or an object."""
        given: dict[str, Any] = media["encoding"] if isinstance(media.get("encoding"), dict) else {}
        out: dict[str, dict[str, Any]] = {}
        properties = plain[0] if plain else {}
        for name in [*properties, *(n for n in given if n not in properties)]:
            rule: dict[str, Any] = given[name] if isinstance(given.get(name), dict) else {}
            content_type = str(rule.get("contentType", ""))
            if "json" in content_type.lower():
                out[name] = {"style": "json"}
                continue
            kind = rule.get("style", "form")
            explode = rule.get("explode", kind == "form")
            kinds = inputs.kinds(properties.get(name, {}))
            if rule or not kinds or not kinds <= SCALARS:
                if isinstance(kind, str) and isinstance(explode, bool):
                    out[name] = {"style": kind, "explode": explode}
        return out

    def _output(self) -> dict[str, Any] | None:
        responses = self.operation.get("responses", {})
        if not isinstance(responses, dict):
            raise Skip("TN450", "responses must be an object", self.op_at.join("responses"))
        codes = sorted(c for c in map(str, responses) if re.fullmatch(r"2\d\d", c))
        codes += [c for c in map(str, responses) if c.upper() == "2XX"]
        for code in codes[:1]:
            raw = responses[code] if code in responses else responses.get(int(code))
            response, at = self.reader.files.deref(raw, self.op_at.join("responses", code))
            if not isinstance(response, dict):
                raise Skip("TN450", f"response {code} must be an object", at)
            content = response.get("content", {})
            if not isinstance(content, dict):
                return None
            media, mode = body_media(content)
            if media is None or mode != "json" or not isinstance(content[media], dict):
                return None
            if "schema" not in content[media]:
                return None
            outputs = Converter(self.reader.shared, OUTPUT)
            schema_at = at.join("content", media, "schema")
            schema = outputs.object_root(content[media]["schema"], schema_at)
            if schema is None:
                converted = outputs.convert(content[media]["schema"], schema_at)
                self.reader.shared.check_loops(converted)
                if not outputs.never_object(converted):
                    return None  # it may be an object or not: no wrapper says which
                # a list (or a scalar) under MCP's wrapper, which the runtime's MCP server
                # puts such a result in
                schema = {
                    "type": "object",
                    "properties": {"result": converted},
                    "required": ["result"],
                }
            outputs.check(schema)
            size, count = self.reader.shared.size(schema)
            if size > BUDGET[OUTPUT]:
                self.result_left_out = Skip(
                    "TN473",
                    f"the response schema holds {size:,} bytes of JSON Schema with the {count} "
                    f"shared schemas it reaches (the budget is {BUDGET[OUTPUT]:,}): left out of "
                    "the spec, so the result is returned as the server sends it, untyped",
                    schema_at,
                )
                self.reader.untyped.append(schema)
                return None
            return schema
        return None


def body_media(content: dict[str, Any]) -> tuple[str | None, str]:
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
        if media.split(";")[0].strip().lower() == "multipart/form-data":
            return media, "multipart"
    for media in content:
        if essence(media) in ANY_MEDIA:  # an empty key names no type: any, as */*
            return media, "json"
    return None, "none"


def raw_media(content: dict[str, Any]) -> tuple[str | None, str]:
    """The media type of a body sent as it is, when no JSON or form type is offered, and its
    mode: the first text type (text/*, application/xml, application/jwt, ..., a text/* range as
    text/plain), else the first other single type (bytes: application/octet-stream, image/png);
    a key that is no media type, or a range such as image/*, is none."""
    for media in content:
        bare = essence(media)
        if bare == "text/*" or (MEDIA_TYPE.fullmatch(bare) and text_media_type(bare)):
            return media, "text"
    for media in content:
        bare = essence(media)
        if MEDIA_TYPE.fullmatch(bare) and "*" not in bare:
            return media, "binary"
    return None, "none"


def multipart_parts(
    media: dict[str, Any], plain: Any, resolve: Callable[[Any], Any]
) -> dict[str, dict[str, Any]]:
    """How each field of a multipart/form-data body is sent (`http.parts`), where OpenAPI's
    default (text, or JSON for an object) is not what it means: a binary string (`format:
    binary` or `byte`, `contentMediaType`, `contentEncoding: base64`, or an Encoding Object
    `contentType` that is no text) is a file part, its text base64-decoded when the schema says
    so; the Encoding Object's `contentType` (its first type, without parameters) is the part's."""
    given: dict[str, Any] = media["encoding"] if isinstance(media.get("encoding"), dict) else {}
    properties: dict[str, Any] = plain[0] if plain else {}
    out: dict[str, dict[str, Any]] = {}
    # a flat body: its properties alone (an Encoding Object entry for no property names no
    # argument, and after renaming it could name another field's argument)
    for name in [*properties, *(n for n in given if n not in properties and not plain)]:
        schema = resolve(properties.get(name))  # a shared schema: what it says
        schema = schema if isinstance(schema, dict) else {}
        if schema.get("type") == "array" and isinstance(resolve(schema.get("items")), dict):
            schema = resolve(schema["items"])  # a list of files: one part each
        rule: dict[str, Any] = given[name] if isinstance(given.get(name), dict) else {}
        declared = str(rule.get("contentType", "")).split(",")[0].split(";")[0].strip().lower()
        media_type = declared or str(schema.get("contentMediaType", "")).strip().lower()
        encoded = schema.get("format") == "byte" or schema.get("contentEncoding") == "base64"
        binary = (
            encoded
            or schema.get("format") == "binary"
            or "contentMediaType" in schema
            or bool(declared and not declared.startswith("text/") and "json" not in declared)
        )
        part: dict[str, Any] = {}
        if binary:
            part["file"] = True
            if encoded:
                part["base64"] = True
        if MEDIA_TYPE.fullmatch(media_type) and "*" not in media_type:
            if media_type != ("application/octet-stream" if binary else "text/plain"):
                part["content_type"] = media_type
        if part:
            out[name] = part
    return out


def _annotations(method: str) -> dict[str, Any]:
    return {
        "get": {"readOnlyHint": True},
        "head": {"readOnlyHint": True},
        "put": {"idempotentHint": True},
        "delete": {"destructiveHint": True, "idempotentHint": True},
    }.get(method, {})


def _origin(url: str) -> str:
    """scheme://host[:port] of a server URL: where a credential header goes."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
