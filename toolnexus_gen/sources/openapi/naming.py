"""Names the import makes: tools (from operationIds), groups (from tags), shared schema files
(from component names) and the prefix of environment variable names (from the title)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from toolnexus_gen.toolspec.naming import python_names

MAX_NAME = 64  # what OpenAI, Gemini and Bedrock take
GROUP = re.compile(r"[^A-Za-z0-9_.:-]+")  # what spec.schema.json lets a group name hold
ARGUMENT = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # a property name every provider takes


def tool_name(operation_id: Any, method: str, route: str) -> str:
    """A name every provider accepts: [A-Za-z0-9_], at most 64, from the operationId (else the
    method and path, its fragment left out); a cut name ends in a stable hash of the whole."""
    if isinstance(operation_id, str) and operation_id.strip():
        raw = operation_id
    else:
        path, _, fragment = route.partition("#")
        raw = f"{method}_{path.replace('{', '').replace('}', '').strip('/')}"
        if fragment:  # Box tells operations on one path apart by a fragment
            raw = f"{raw}_{fragment}"
    name = re.sub(r"[^A-Za-z0-9_]+", "_", raw).strip("_") or method
    if name[0].isdigit():
        name = f"op_{name}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9].rstrip('_')}_{digest}"
    return name


def group_name(tag: str) -> str | None:
    """A tag as a group name ([A-Za-z0-9_.:-], at most 64), or None when nothing is left."""
    name = GROUP.sub("_", tag.strip()).strip("_")[:MAX_NAME]
    return name or None


def free(name: str, taken: set[str]) -> str:
    """`name`, or `name_2`, `name_3`, ... : the first not in `taken` (compared ignoring case,
    so that no two files differ by case alone)."""
    lowered = {t.lower() for t in taken}
    candidate, n = name, 2
    while candidate.lower() in lowered:
        candidate, n = f"{name}_{n}", n + 1
    return candidate


def component_name(pointer: str, stem: str) -> str:
    """A shared schema file's name for what `pointer` (in a file named `stem`) holds: a
    component's own name after its last dot (io.k8s.api.core.v1.Pod is Pod: model generators
    read dots as module paths), a whole file's stem, else the pointer's last steps."""
    prefix = "/components/schemas/"
    if pointer.startswith(prefix) and "/" not in pointer[len(prefix) :]:
        base = pointer[len(prefix) :].replace("~1", "/").replace("~0", "~").rsplit(".", 1)[-1]
    elif not pointer:
        base = stem
    else:
        tokens = [t for t in pointer.split("/") if t and not t.isdigit()]
        base = "_".join(tokens[-3:])
    base = re.sub(r"[^A-Za-z0-9_-]+", "_", base).strip("_-") or "schema"
    return base if not base[0].isdigit() else f"S{base}"


def title_prefix(title: str, stem: str) -> str:
    """Words from the API's title (before a ' - ' or ':' subtitle, a trailing 'API' left out:
    'Weather API' -> WEATHER), else the file's name, else API."""
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


def env_name(scheme: str, prefix: str) -> str:
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


def argument_name(name: str, taken: set[str]) -> str:
    """`name` when every provider takes it as a property name, else a safe form of it
    (Twilio's `StartTime<` is `StartTime_lt`, `page[size]` is `page_size`), unique in `taken`;
    the binding's `names` maps it back to the name on the wire."""
    if ARGUMENT.fullmatch(name):
        return name
    words = name.replace("<=", "_le").replace(">=", "_ge").replace("<", "_lt").replace(">", "_gt")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", words).strip("_")[:60] or "arg"
    return free(safe, taken)


def python_keys(name: str) -> list[str]:
    """The Python names a tool gets (handler method, model class, model module), as keys that
    two tools must not share (modules compared ignoring case, as file systems may)."""
    names = python_names(name)
    return [f"method:{names.method}", f"model:{names.model}", f"module:{names.module.lower()}"]


def distinct_name(name: str, python: dict[str, str], notes: list[str], label: str) -> str:
    """`name`, or `name_2`, `name_3`, ... when another tool already has one of the Python names
    it would get (operationIds that differ only in case: "List Rules", "List rules")."""
    candidate, n = name, 2
    while any(key in python for key in python_keys(candidate)):
        candidate, n = f"{name}_{n}", n + 1
    if candidate != name:
        other = next(python[key] for key in python_keys(name) if key in python)
        notes.append(
            f"{candidate}: {label} would be {name!r}, which differs from {other!r} only in case "
            f"or punctuation (one Python name for both); imported as {candidate!r}"
        )
    return candidate
