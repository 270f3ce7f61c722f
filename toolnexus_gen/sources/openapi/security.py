"""Security schemes as headers whose values are `${VAR}` placeholders, read from the environment
at run time, and the credentials that are never a model's argument.

Carried: http bearer, oauth2 and openIdConnect as `Authorization: Bearer ${VAR}`, apiKey in a
header as that header, apiKey in a cookie as `Cookie: name=${VAR}`. An API key in the query
string (it would be logged with the URL) and http basic are not carried: the summary says so,
and `Toolkit(http_client=httpx.AsyncClient(auth=...))` covers them.

The variable's name is never the document's to choose: it is `TOOLNEXUS_`, words of the
document's title and the scheme's name (`TOOLNEXUS_WEATHER_BEARER_AUTH`), or, with
`--env-prefix NAME`, the user's prefix and the scheme's name. A title and a scheme name can
spell any name (a title `Anthropic` and a scheme `apiKey` made ANTHROPIC_API_KEY, whose value
then went to the document's server); under the fixed prefix they can only spell a variable
made for an imported tool. A scheme name with template syntax, or a header or cookie name that
is no HTTP token or one the HTTP client owns, is TN454.

A header or query parameter that carries a credential is never an argument for the model to
fill: one a security scheme of the document names (its apiKey's header or query name, or
Authorization), or one whose name says it is a credential (`api_key`, `access_token`,
`X-Api-Key`, a `token` header, ...). A query parameter named just `token` is judged by the
document's schemes: when it declares some and none of them is that parameter, the credential
goes where they say (a bearer header), and `token` is a page or continuation token, an argument.
A credential parameter is left out and the summary says so; where no header the import writes
sends a credential instead, the summary says that those tools send none.
"""

from __future__ import annotations

import re
from typing import Any

from toolnexus_gen.sources.openapi.document import At, Files, Skip
from toolnexus_gen.sources.openapi.naming import env_name, title_prefix
from toolnexus_gen.toolspec.http import HEADER_NAME, header_problem

ENV_NAMESPACE = "TOOLNEXUS"  # every variable name an import makes starts with it
# what a security scheme's name may not hold: it must never reach a template as syntax
UNSAFE_NAME = re.compile(r"[${};=\x00-\x1f\x7f-\x9f]")
# parameter names that say their value is a credential
CREDENTIAL_NAME = re.compile(
    r"(?i)^(x-)?((api|access|auth|bearer|private|refresh|session|id)[-_]?)?token$"
    r"|^(x-)?api[-_]?key$|^(x-)?(client|api)[-_]?secret$|^(x-)?auth(orization)?$"
    r"|^(x-)?access[-_]?key$|^(x-)?secret[-_]?key$"
)


def default_prefix(title: str, stem: str) -> str:
    return f"{ENV_NAMESPACE}_{title_prefix(title, stem)}"


def prefix_problem(prefix: str) -> str | None:
    """Why `--env-prefix` cannot start environment variable names, or None."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", prefix):
        return "letters, digits and _, not starting with a digit"
    return None


class Security:
    """The document's security schemes, as the headers each operation sends."""

    def __init__(self, files: Files, prefix: str) -> None:
        self.files = files
        self.prefix = prefix
        data = files.root.data
        components = data.get("components") if isinstance(data.get("components"), dict) else {}
        schemes = components.get("securitySchemes", {})
        self.schemes: dict[str, Any] = schemes if isinstance(schemes, dict) else {}
        self.env: dict[str, str] = {}  # variable -> what it holds
        self.env_servers: dict[str, list[str]] = {}  # variable -> the origins it is sent to
        self.notes: list[str] = []
        # (in, lower-case name) of every parameter a scheme of this document fills
        self.covered: set[tuple[str, str]] = {("header", "authorization")}
        for scheme in self.schemes.values():
            if isinstance(scheme, dict) and scheme.get("type") == "apiKey":
                if isinstance(scheme.get("name"), str) and scheme.get("in") in ("header", "query"):
                    self.covered.add((scheme["in"], scheme["name"].lower()))

    def is_credential(self, place: str, name: str) -> bool:
        """A header or query parameter whose value is a credential: never a model argument.
        One a security scheme of the document names, or one whose name says so; but a query
        parameter called just `token` is judged by the schemes: where the document declares
        them and none puts a credential there, it is a page or continuation token (an
        argument), not a credential."""
        if place not in ("header", "query"):
            return False
        if (place, name.lower()) in self.covered:
            return True
        if place == "query" and name.lower() == "token" and self.schemes:
            return False
        return bool(CREDENTIAL_NAME.match(name))

    def headers(self, operation: dict[str, Any], op_at: At, origin: str) -> dict[str, str]:
        """Headers for the first security requirement whose schemes can all be carried."""
        if "security" in operation:
            requirements, at = operation["security"], op_at.join("security")
        else:
            requirements, at = (
                self.files.root.data.get("security", []),
                At(self.files.root, "/security"),
            )
        if not isinstance(requirements, list):
            raise Skip("TN450", "security must be a list of requirements", at)
        missed: list[str] = []
        for requirement in requirements:
            if not isinstance(requirement, dict):
                continue
            headers: dict[str, str] = {}
            env: dict[str, str] = {}
            carried = True
            for scheme_name in requirement:
                header = self._scheme_header(scheme_name)
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
                    self.env.setdefault(var, what)
                    servers = self.env_servers.setdefault(var, [])
                    if origin not in servers:
                        servers.append(origin)
                return headers
        for scheme_name in missed:
            note = (
                f"security scheme {scheme_name!r} is not carried "
                f"({_scheme_kind(self.schemes.get(scheme_name))}); give the Toolkit an "
                "http_client that authenticates (httpx.AsyncClient(auth=...))"
            )
            if note not in self.notes:
                self.notes.append(note)
        return {}

    def _scheme_header(self, name: str) -> tuple[str, str, str, str] | None:
        """(header, value template, environment variable, what it holds) for a scheme that
        can be carried, else None."""
        at = At(self.files.root, "/components/securitySchemes").join(name)
        scheme, scheme_at = self.files.deref(self.schemes.get(name), at)
        if not isinstance(scheme, dict):  # not defined: said in the summary as not carried
            return None
        if UNSAFE_NAME.search(name):
            raise Skip(
                "TN454",
                f"security scheme name {name!r} holds $, {{, }}, ;, = or a control character",
                at,
                key=True,
            )
        kind = scheme.get("type")
        var = env_name(name, self.prefix)
        bearer = kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer"
        if bearer or kind in ("oauth2", "openIdConnect"):
            what = "a bearer token" if kind == "http" else f"an {kind} access token"
            return (
                "Authorization",
                f"Bearer ${{{var}}}",
                var,
                f"{what} ({name}), sent as Authorization: Bearer",
            )
        place = scheme.get("in")
        if (
            kind == "apiKey"
            and place in ("header", "cookie")
            and isinstance(scheme.get("name"), str)
        ):
            header = scheme["name"]
            # a header or cookie name is an HTTP token: nothing else reaches a header template
            why = header_problem(header) if place == "header" else None
            if why is None and not HEADER_NAME.fullmatch(header):
                why = "is not a cookie name (letters, digits and !#$%&'*+-.^_`|~ only)"
            if why is not None:
                raise Skip(
                    "TN454",
                    f"security scheme {name!r}: the {place} name {header!r} {why}",
                    scheme_at.join("name"),
                )
            if place == "header":
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
