"""The one catalogue of diagnostic codes: what each means and how to fix it.

`CODES` are the structural codes (TN1xx spec errors, TN2xx tool names, TN4xx tool sources:
TN40x MCP servers, TN42x built-in tools and skills, TN44x http bindings, TN45x OpenAPI import;
TN8xx configuration);
`RULES` the provider compatibility rules (TN3xx), each with the provider's own error text.
Every code also has a failing example (diagnostics/examples.py) and an area (AREAS: where it
applies). `toolnexus-gen explain CODE` prints `entry(CODE)`, and the docs' diagnostics page
(docs/reference/diagnostics.md) is rendered from the same entries at build time, so the two never
disagree; the tests run every example.

Adding a code: an entry in CODES (or a Rule in RULES for a provider rule), with "Fix:" in its
text, and an example in examples.py.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from toolnexus_gen.diagnostics import Severity

CODES: dict[str, tuple[str, str]] = {
    "TN101": (
        "malformed JSON or YAML",
        "The file does not parse. The message gives the parser's complaint and its line and column.\n"
        "Fix: correct the syntax there. NaN and Infinity are not JSON numbers and are refused too,\n"
        "as are numbers JSON cannot carry: an integer of more than 4,300 digits (in decimal or\n"
        "hexadecimal) and a float past the double range (`1e999`); write such a value as a string.",
    ),
    "TN102": (
        "unreadable file",
        "The file cannot be read as UTF-8 text: it is binary, not UTF-8, unreadable, or larger than the\n"
        "size limit for spec files.\nFix: save it as UTF-8 JSON or YAML.",
    ),
    "TN103": (
        "empty file",
        "A spec file must hold one tool. An empty file is almost always a mistake.\n"
        "Fix: add at least `description:`, or move the file out of the spec folder.",
    ),
    "TN104": (
        "document too deep or too large",
        "The document is nested deeper than the limit, or YAML aliases expand it by more than\n"
        "200,000 values (an 'alias bomb'; the same limit for every YAML text toolnexus-gen reads:\n"
        "specs, fragments, OpenAPI documents, SKILL.md front matter).\n"
        "Fix: flatten the schema with $defs and $ref; write repeated YAML out, or use $ref.",
    ),
    "TN105": (
        "duplicate or non-string key",
        "A mapping repeats a key (JSON parsers silently keep the last one) or uses a non-string key.\n"
        "Fix: keep one of them; quote keys such as `yes`, `on` or numbers in YAML.",
    ),
    "TN106": (
        "YAML tag not allowed",
        "Spec files hold plain data. YAML tags that construct objects (!!python/...), custom tags and\n"
        "merge keys are refused so that reading a spec can never run code.\nFix: write plain values.",
    ),
    "TN107": (
        "spec is not a mapping",
        "The top level of a spec must be a mapping: the tool envelope (name, description,\n"
        "input_schema, ...) or a bare JSON Schema object.\nFix: wrap it in a mapping.",
    ),
    "TN108": (
        "unknown key",
        "The envelope only knows name, title, description, input_schema, output_schema, examples,\n"
        "strict, profile, annotations, source, http, groups, defer_loading and targets. Keys starting with x- are ignored; anything else is a typo\n"
        "or a misplaced schema keyword.\nFix: correct the key, move it into input_schema, or prefix it with x-.",
    ),
    "TN109": (
        "invalid envelope value",
        "A key of the envelope has the wrong type or value (checked against the spec schema the\n"
        "package ships: toolnexus_gen/spec.schema.json).\nFix: as the message says.",
    ),
    "TN110": (
        "missing or empty description",
        "Every tool needs a non-empty description: models choose tools by it, and Bedrock rejects an\n"
        'empty one ("Member must have length greater than or equal to 1").\nFix: describe the tool.',
    ),
    "TN111": (
        "name does not match file",
        "A tool's name defaults to its file stem; when `name` is given it must equal the stem, so a\n"
        "tool is always found by its file name.\nFix: rename the file or the tool.",
    ),
    "TN112": (
        "invalid JSON Schema",
        "input_schema or output_schema is not valid JSON Schema draft 2020-12 (for example\n"
        "`type: strng`).\nFix: correct the keyword the pointer names.",
    ),
    "TN113": (
        "input schema root is not an object",
        'Every provider requires the arguments to be an object: OpenAI "schema must be a JSON Schema\n'
        'of \'type: "object"\'", Anthropic "input_schema.type: Field required", Bedrock "must be one of\n'
        'the following: object".\nFix: put the arguments under `type: object` / `properties`.',
    ),
    "TN114": (
        "example does not match input schema",
        "Each entry of `examples` must validate against input_schema: Anthropic sends them to the\n"
        "model as input_examples, and a wrong example teaches wrong calls.\nFix: correct the example.",
    ),
    "TN115": (
        "duplicate tool name",
        "Two spec files define the same tool name (for example get_weather.json and\n"
        "get_weather.yaml). Every provider keys calls by name.\nFix: remove or rename one.",
    ),
    "TN116": (
        "Python name collision",
        "Two tools become the same Python identifier (get-weather and get_weather both become\n"
        "get_weather / GetWeatherArgs). toolnexus-gen never adds silent suffixes.\nFix: rename one tool.",
    ),
    "TN117": (
        "unknown target",
        "`targets.only` / `targets.exclude` name a target that does not exist.\n"
        "Fix: use gemini, openai, openai_responses, anthropic, mcp or bedrock.",
    ),
    "TN118": (
        "no tool specs",
        "The spec folder holds no tool spec: it is empty, or every file in it starts with _ or .\n"
        "(those are shared fragments). The build still writes an empty package.\n"
        "Fix: add a spec (toolnexus-gen init writes an example), or point SPECS_DIR elsewhere.",
    ),
    "TN119": (
        "argument model cannot be generated",
        "datamodel-code-generator refused the input schema while making the typed argument model;\n"
        "its message is quoted.\nFix: simplify the schema at the reported place, or report the\n"
        "schema to toolnexus-gen so the generator can be worked around.",
    ),
    "TN120": (
        "$ref not allowed or unresolvable",
        "A $ref points outside the spec folder, to a URL (http:, https:, file:), or to nothing; or a\n"
        "$dynamicRef/$recursiveRef is not a fragment (#...), or a $id names a URL (references under it\n"
        "would resolve there). toolnexus-gen never fetches schemas over the network.\n"
        "Fix: copy the schema into a `_shared/` file under the spec folder and reference it relatively;\n"
        "remove the $id. For a tool synced from an MCP server, leave it out with the server's `tools`\n"
        "allowlist in mcp.json.",
    ),
    "TN121": (
        "symbolic link leaves the spec folder",
        "A spec file, or a folder under the spec folder, is a symbolic link to something outside\n"
        "it. Nothing outside the spec folder is ever read, so the link is refused, not followed.\n"
        "Fix: copy the file into the spec folder, or move the link's target under it.",
    ),
    "TN122": (
        "schema keyword that names Python code",
        "A schema holds a keyword the argument-model generator (datamodel-code-generator) reads as\n"
        "an instruction, not as a schema: `customTypePath`, `customBasePath`, `x-python-type`,\n"
        "`x-python-import`, `x-is-base-class`, `x-is-classvar`, or any other `custom...` or\n"
        "`x-python-...` keyword. It would put `from <module> import <name>` in the generated package,\n"
        "so whoever wrote the schema would choose code that `import tools` runs.\n"
        "Fix: remove the keyword. For the project's own specs, `codegen_keywords = true` under\n"
        "[tool.toolnexus-gen] allows them; a synced MCP snapshot never may (sync strips them).",
    ),
    "TN123": (
        "keyword that names Python code removed from a server's schema",
        "A tool's inputSchema or outputSchema, as an MCP server sent it, held a keyword that would\n"
        "name Python code for the generated package (see TN122). `sync` writes the snapshot without\n"
        "it and names the keyword and where it was; the rest of the schema is kept.\n"
        "Fix: nothing to do; tell the server's authors if the keyword matters to them.",
    ),
    "TN130": (
        "schema too large",
        "A tool's input_schema or output_schema, with every shared schema its $refs reach (bundled\n"
        "into its $defs), holds more than 100,000 schema nodes. Every later stage (provider rules,\n"
        "transforms, argument models, token estimates, breaking) works over it, and no provider\n"
        "takes a tool definition that large. An OpenAPI import leaves such a tool out (TN415).\n"
        "Fix: reach fewer shared schemas from the tool, or split it.",
    ),
    "TN201": (
        "tool name invalid for Gemini",
        'Gemini: "Invalid function name. Must start with a letter or an underscore. Must be alphameric\n'
        "(a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of\n"
        '64."\nFix: rename the tool, or exclude the gemini target for it (targets: {exclude: [gemini]}).',
    ),
    "TN202": (
        "tool name invalid for OpenAI",
        "OpenAI (Chat and Responses): \"Invalid 'tools[0].function.name': string does not match\n"
        "pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.\" (at most 64).\n"
        "Fix: rename the tool (no dots, colons or spaces), or exclude the openai targets for it.",
    ),
    "TN203": (
        "tool name invalid for Anthropic",
        "Anthropic: \"tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'\".\n"
        "Fix: rename the tool, or exclude the anthropic target for it.",
    ),
    "TN204": (
        "tool name not recommended for MCP",
        "MCP: tool names SHOULD be 1-128 characters of A-Z, a-z, 0-9, _, - and . (the SDK warns).\n"
        "Fix: rename the tool.",
    ),
    "TN205": (
        "tool name invalid for Bedrock",
        "Bedrock Converse: \"Value at 'toolConfig.tools.N.member.toolSpec.name' failed to satisfy\n"
        'constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+" (1-64).\n'
        "Fix: rename the tool, or exclude the bedrock target for it.",
    ),
    "TN210": (
        "tool name aliased for a target (name_aliases)",
        "The tool's name is one this target rejects, and `name_aliases = true` gave it an alias the\n"
        "target accepts, in this target's file only (`github.create_issue` -> `github_create_issue`;\n"
        "too long: cut, with a stable hash suffix). The dispatch table maps the alias back, so round\n"
        "trips, loops, integrations and the MCP server reach the tool under its spec name.\n"
        "Fix: nothing to do; rename the tool to silence it.",
    ),
    "TN211": (
        "property name aliased for a target (name_aliases)",
        "A property name this target rejects (Anthropic: ^[a-zA-Z0-9_.-]{1,64}$, so `$meta` or `año`)\n"
        "is sent under an alias (`_meta`, `ano`), nested properties too. Arguments are mapped back\n"
        "before validation: handlers see the spec's names.\nFix: nothing to do; rename to silence it.",
    ),
    "TN212": (
        "two tools share a name in one target's file",
        "Under name_aliases two tools end up with the same name in one provider file (for example\n"
        "`a.b` and `a_b` for OpenAI). Both specs are named; no suffix is added silently.\n"
        "Fix: rename one of the tools.",
    ),
    "TN220": (
        "meaning moved into a description (describe transform)",
        'With transforms = ["describe"] for a target, a keyword or construct that target cannot carry\n'
        "is taken out of its schema and its meaning written into the description of the node that held\n"
        "it (format: uri, no other properties, values: ...); where a nearby form keeps more meaning it is\n"
        "used (oneOf -> anyOf, a string const -> enum, [T, null] -> nullable). The argument model is made\n"
        "from the spec and still enforces the constraint: a call that breaks it gets an error result\n"
        "naming it. Fix: nothing to do; it says what the provider no longer sees.",
    ),
    "TN221": (
        "tool sent in strict mode (strictify transform)",
        'With transforms = ["strictify"] (openai, openai_responses, anthropic) the schema is made\n'
        "strict-mode valid: every object closed, every optional property required and nullable, and the\n"
        "tool goes out with strict: true. At run time a null for a property the spec made optional\n"
        "means absent, so the model's default applies (through $refs too). Where strict mode still cannot\n"
        "carry a keyword, describe handles it when it is on; a tool strict mode cannot carry at all goes\n"
        "out non-strict (TN223).\nFix: nothing to do.",
    ),
    "TN222": (
        "Gemini declaration sent with parametersJsonSchema (reach)",
        'Under profile = "reach", a tool that Gemini `parameters` (its OpenAPI subset) cannot carry\n'
        "even after describe (a free-form object, a value of any type, a recursive schema, an array\n"
        "of any items) goes out with `parametersJsonSchema` (and `responseJsonSchema`) for that\n"
        "declaration only; the others keep `parameters`. Gemini takes either field per declaration.\n"
        "The message names the rule `parameters` still breaks.\n"
        'Fix: nothing to do; set schema_field = "parametersJsonSchema" to send every tool that way.',
    ),
    "TN223": (
        "tool sent non-strict (strictify)",
        "strictify sends a tool non-strict when strict mode cannot carry it without forbidding calls\n"
        "the spec allows: a value of any type, an object that takes properties it does not name\n"
        "(additionalProperties: true or a schema, patternProperties, no properties), an array of any\n"
        "items; or when a strict-mode rule still fails after describe (recursion for Anthropic, the\n"
        "nesting limit for OpenAI). The message names the node. The tool still reaches the provider,\n"
        "and the argument model checks every call.\n"
        "Fix: nothing to do; give the node a type (or close the object) to make the tool strict.",
    ),
    "TN224": (
        "input schema root taken as an object root (reach)",
        'Under profile = "reach", an input_schema root without a type that holds nothing but object\n'
        'keywords and annotations (`{"$schema": "..."}` alone: the tool takes any arguments) is sent\n'
        "as an object root, open (additionalProperties: true) when it names no properties; a type\n"
        'list holding "object" becomes "object". Arguments are always an object, so no call changes\n'
        "meaning.\nFix: write `type: object` in the schema to silence it.",
    ),
    "TN225": (
        "schema rewritten without loss (describe transform)",
        "A construct the target refuses has a form it takes that means exactly the same: an allOf\n"
        "merged into its schema, a $ref with sibling keywords written as a one-branch anyOf,\n"
        "`properties: {}` on a root object without properties (OpenAI), `items: {}` on an array\n"
        "without items. Nothing is lost.\nFix: nothing to do; write the schema that way to silence it.",
    ),
    "TN226": (
        "tool sent non-strict: over a provider's per-request strict limits (strictify)",
        "Anthropic refuses a request whose strict tools are more than 20 or hold more than 24\n"
        "optional or 16 union parameters between them (strictify's nullable properties are union\n"
        "parameters). Under strictify the build keeps every request within them: the whole set\n"
        "when there are no toolsets, else each toolset (a tool strict in the file counts in every\n"
        "toolset that holds it). Tools are taken by the share of the limits they use, then by\n"
        "name; one that does not fit goes out non-strict, its schema still in the strict shape\n"
        "(a null still means absent), and the argument model checks every call.\n"
        "Fix: nothing to do; split a toolset to keep more tools strict.",
    ),
    "TN230": (
        "schema too large once its $refs are inlined",
        "A target that has no references (Gemini `parameters` and `response`, or the inline_refs\n"
        "transform) needs every $ref replaced by a copy of what it names. A definition named by\n"
        "several $refs is copied once per path to it, so a graph of shared definitions (each level\n"
        "naming the next twice) doubles at every level. The copy is counted before it is made, and\n"
        "past 20,000 schema nodes the target refuses the tool, at the $ref that adds the most.\n"
        'Under profile = "reach" the Gemini declaration goes out with parametersJsonSchema instead\n'
        "(TN222), which keeps $defs.\n"
        'Fix: set schema_field = "parametersJsonSchema" for gemini, exclude the target for the tool\n'
        "(targets: {exclude: [gemini]}), or share less of the schema.",
    ),
    "TN420": (
        "unknown built-in tool",
        "`builtins` in [tool.toolnexus-gen] names a tool that is not one of the ten built-ins: bash,\n"
        "read, write, edit, grep, glob, webfetch, question, apply_patch, todowrite.\n"
        "Fix: correct the name (the message lists the known ones), or remove it.",
    ),
    "TN421": (
        "built-in tool replaced by a spec",
        "A spec file has the name of a selected built-in tool: the spec wins, and the tool becomes a\n"
        "handler method like any other. Fix: nothing, if that is what you meant; otherwise rename the\n"
        "spec, or leave the tool out of `builtins` (e.g. {tools = {read = false}}).",
    ),
    "TN422": (
        "skills folder missing",
        "`skills` in [tool.toolnexus-gen] names a folder that does not exist (paths are relative to the\n"
        "pyproject.toml).\nFix: create the folder, or correct the setting.",
    ),
    "TN423": (
        "malformed SKILL.md",
        "A SKILL.md must start with YAML front matter between two --- lines, holding a non-empty\n"
        "`name` and `description` (other keys are allowed); the body that follows is what the skill\n"
        "tool returns. Fix: as the message says, at the line it names.",
    ),
    "TN424": (
        "invalid skill name",
        "Skill names follow the Agent Skills format: lowercase letters, digits and single hyphens, at\n"
        "most 64 characters (pdf-forms, not PDF Forms).\nFix: rename the skill in its front matter.",
    ),
    "TN425": (
        "two skills with one name",
        "The skill tool chooses a skill by name, so names are unique across the skills folder. The\n"
        "message names both SKILL.md files.\nFix: rename one of them.",
    ),
    "TN426": (
        "no skills found",
        "The skills folder holds no SKILL.md: the package gets no skill tool (schemas/skills.json is\n"
        "empty and skills_prompt() says so).\nFix: add a skill folder with a SKILL.md, or drop the setting.",
    ),
    "TN490": (
        "SKILL.md outside the skills folder, or unreadable",
        "A SKILL.md is a symbolic link whose target is outside the skills folder (or does not\n"
        "exist), or it cannot be read (not a regular file). A skill's text is copied into the\n"
        "generated package, so a link must never bring in a file from elsewhere (a link to a key or\n"
        "a secret would ship it). Links inside the skills folder are followed.\n"
        "Fix: copy the file into the skills folder, or move it there and link the other way.",
    ),
    "TN491": (
        "file beside a skill left out",
        "A file beside a skill is a symbolic link out of the skills folder, to nothing, or to a\n"
        "folder: it is left out of the files the skill tool lists (the build follows no link out of\n"
        "the skills folder, and no linked folder). The build goes on.\n"
        "Fix: copy the file into the skill's folder if the skill needs it; otherwise remove the link.",
    ),
    "TN440": (
        "http binding: unknown method or body",
        "A spec's `http` key names a method the runtime does not send, asks for a body on a GET or\n"
        "HEAD (their arguments go to the query string), or stands beside a `source` (a tool runs one\n"
        "way).\nFix: use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS; drop `body` or use POST.",
    ),
    "TN441": (
        "http binding: URL not usable",
        "`http.url` must be an absolute http(s) URL, or a path appended to a base_url (`http.base_url`\n"
        "or base_url under [tool.toolnexus-gen]). Placeholders may fill its path and query, never its\n"
        "host; ${VAR} is not read in a URL (URLs are logged: credentials go in headers), and a\n"
        "fragment is never sent.\nFix: as the message says.",
    ),
    "TN442": (
        "http binding: placeholder or argument not usable",
        "A `{name}` in the URL must be a required string or integer argument (a URL cannot leave it\n"
        "out, and its value is URL-encoded into one segment); in a header it must be a scalar\n"
        "argument (the header is left out when it is absent). `query` and `body_arg` must name\n"
        "arguments, each used once.\nFix: add the argument to input_schema (and to required), or\n"
        "correct the name.",
    ),
    "TN443": (
        "http binding: literal credential in a header",
        "A header whose name says it carries a credential (Authorization, Cookie, *api-key*, *-Key,\n"
        "*token*, *secret*, *signature*, *session*, ...) has a literal value: it would be copied into\n"
        "the generated package.\n"
        "Fix: write it as ${VAR} ('Bearer ${API_TOKEN}'), read from the environment when the call is\n"
        "made; or, if the value is no secret, list TN443 under ignore.",
    ),
    "TN444": (
        "http binding: header not sendable",
        "A header in `http.headers` is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~), is one\n"
        "the HTTP client owns (Host, Content-Length, Transfer-Encoding, Connection, TE, Upgrade,\n"
        "Expect, Trailer, Keep-Alive, Proxy-*: a tool setting them, from an argument above all, could\n"
        "smuggle a second request past a proxy), or its literal text holds a line break, a control or\n"
        "a non-ASCII character.\nFix: remove the header (a proxy belongs to the Toolkit's http_client),\n"
        "or correct its name or text.",
    ),
    "TN370": (
        "override of one of your own specs",
        "An override in [tool.toolnexus-gen.overrides] names a tool that is one of the project's own\n"
        "specs (a handler method). Overrides change tools that come from a source (an OpenAPI\n"
        "document, an MCP server, the built-ins), whose specs a sync rewrites.\n"
        "Fix: edit the spec itself, and remove the override.",
    ),
    "TN371": (
        "override names an unknown argument",
        "An override's arguments.<arg>, hide, fixed or defaults names an argument the tool does not\n"
        "have (the names are the source's, before any rename). The message lists the tool's arguments.\n"
        "Fix: correct the name (`toolnexus-gen list` and the spec under specs/<source>/ show them).",
    ),
    "TN372": (
        "override rename collides",
        "An override renames a tool to the name of another tool, renames an argument to the name of\n"
        "another argument of the tool (a hidden or fixed one included), or renames or describes an\n"
        "argument it also hides.\n"
        "Fix: choose another name, or hide the argument without renaming it.",
    ),
    "TN373": (
        "hidden required argument without a value",
        "An override hides an argument the source requires, but gives it no fixed value and the\n"
        "spec has no default: the model could not send it, and nothing else would.\n"
        'Fix: add fixed = {arg = value} (a value "${VAR}" is read from the environment at run time),\n'
        "or a default (defaults = {arg = value}).",
    ),
    "TN374": (
        "fixed value or default its schema refuses",
        "A fixed value or a default of an override does not validate against the argument's schema\n"
        '(a string for an integer, a value outside its enum), or a "${VAR}" value (text, read at run\n'
        "time) is given to an argument that takes no string, or a default reads the environment, or\n"
        "a fixed value sent in a header holds a line break or a control character.\n"
        "Fix: give a value the schema takes.",
    ),
    "TN375": (
        "override of an unknown tool",
        "An override keys on a tool no source gives. Overrides key on the name the source gives a\n"
        "tool: for an OpenAPI document the name `import openapi` gives (issues/create -> issues_create),\n"
        "for an MCP server its snapshot's name (with the server's prefix), for a built-in its name.\n"
        "Fix: correct the name (`toolnexus-gen list` shows them), or remove the override.",
    ),
    "TN376": (
        "override target gone upstream",
        "A sync removed the tool (or the argument) an override names: the document or the server no\n"
        "longer has it. The build goes on without that part of the override and says which change\n"
        "removed it (from the snapshot folder's .toolnexus-sync.json).\n"
        "Fix: remove the override (or that part of it), or override the tool that replaced it.",
    ),
    "TN377": (
        "hidden argument sends a source's default that looks like ${VAR}",
        "An override hides an argument whose default, given by the source (an OpenAPI document, an\n"
        'MCP server), holds "${": the default is sent as it is written. Only the project\'s own\n'
        "fixed values read the environment at run time; a value a third party wrote never does (it\n"
        "could otherwise name any variable of the process, a secret key, and have it sent).\n"
        'Fix: if the argument should carry an environment value, add fixed = {arg = "${VAR}"}; if\n'
        "the text is meant, nothing to do (or list TN377 under ignore).",
    ),
    "TN378": (
        "declared document moves its tools to another server",
        "`toolnexus-gen sync` would change where a tool of a declared OpenAPI document sends its\n"
        "calls: the scheme, host or port of its base URL (the document's `servers`) is not what the\n"
        "last sync wrote. Whoever edits the document could otherwise send every call, with the\n"
        "credentials its headers carry, to a server of their choosing. Nothing is written.\n"
        "Fix: if the new server is meant, run `toolnexus-gen sync --accept-origin` once; or pin the\n"
        'server in the declaration (server = "https://...").',
    ),
    "TN379": (
        "declared document moves an argument from a header to the query",
        "`toolnexus-gen sync` wrote a tool of a declared OpenAPI document whose argument the last\n"
        "sync sent in a header and this one sends in the URL's query, where access logs, proxies\n"
        "and the runtime's request log keep it (a token or key there is exposed).\n"
        "Fix: check the document's change; if the argument carries a secret, fix its location with\n"
        "an overlay, or hide it.",
    ),
    "TN445": (
        "http binding: body media type not usable",
        "`http.content_type` names the media type of the body. A json body: application/json or a\n"
        "type whose subtype ends in +json (application/merge-patch+json, application/vnd.api+json),\n"
        "without parameters. A text or binary body: one type/subtype with `; name=value`\n"
        "parameters if any, printable ASCII without a line break (a header cannot be added through\n"
        "it), not a range (image/*) nor a multipart type, and a text body's charset, if named, is\n"
        "utf-8 (the text is sent as UTF-8); such a body's Content-Type is content_type alone, so a\n"
        "Content-Type header beside it is refused. Other bodies take no content_type; a `parts`\n"
        "entry's content_type (a multipart body) is a type/subtype without parameters.\n"
        "Fix: correct the media type, set body to json, text or binary, or remove content_type (or\n"
        "the Content-Type header).",
    ),
    "TN450": (
        "OpenAPI document malformed",
        "`toolnexus-gen import openapi` found something that is not OpenAPI 3.0 or 3.1 where the\n"
        "message points: no `openapi: 3.x` field (Swagger 2.0 documents need converting first), a\n"
        "paths, operation, parameter or schema that is not an object, a parameter without name or\n"
        "`in`. A problem in one operation skips that operation (a warning at its place); one in the\n"
        "document itself is an error and nothing is written.\nFix: correct the document there.",
    ),
    "TN451": (
        "OpenAPI $ref broken or not local",
        "A $ref in the OpenAPI document points to nothing, names a URL (nothing is fetched), a file\n"
        "that does not exist, or a file outside the root document's folder (only files beside the\n"
        "document or under its folder are read); or a schema reaches itself with nothing in between.\n"
        "The operations that reach it are skipped, each with this warning; the others are imported.\n"
        "Fix: correct the reference (save a remote file beside the document and refer to its path).",
    ),
    "TN452": (
        "OpenAPI operations give one tool name twice",
        "Two operations have the same operationId, or names that become the same once made safe for a\n"
        "tool (`pets.list` and `pets_list`). The first is imported, the later one skipped with this\n"
        "warning.\nFix: give them distinct operationIds.",
    ),
    "TN453": (
        "OpenAPI schema not valid after conversion",
        "A schema the import made (OpenAPI 3.0 nullable, boolean exclusiveMinimum and example turned\n"
        "into JSON Schema 2020-12) is not valid JSON Schema; the message names the keyword at the\n"
        "place in the document it came from. Every operation that reaches the schema is skipped with\n"
        "this warning; the others are imported.\nFix: correct the schema there.",
    ),
    "TN454": (
        "OpenAPI security scheme or header not usable",
        "A security scheme's name holds $, {, }, ;, = or a control character, or the header or cookie\n"
        "name of an apiKey scheme is not an HTTP token or names a header the HTTP client owns (Host,\n"
        "Content-Length, Proxy-*, ...). The import makes headers and ${VAR} names from these: a\n"
        "document must not be able to put template syntax there, or choose which environment\n"
        "variable is read and sent to its server. Nothing is written.\n"
        "Fix: correct the name in the document.",
    ),
    "TN455": (
        "OpenAPI server URL holds a user name and password",
        "The server URL (the document's, or --server) is written `https://user:password@host/...`.\n"
        "Copied as it is, the password would be in every spec and in the generated dispatch.py. The\n"
        "import leaves it out of the URL and the tools send `Authorization: Basic ${VAR}` instead\n"
        "(unless a security scheme already sends an Authorization header); the warning names the\n"
        "variable, which holds the base64 of user:password, and the summary lists it.\n"
        "Fix: set the variable where the tools run; remove the credentials from the document.",
    ),
    "TN470": (
        "OpenAPI: a Swagger 2 document",
        "`toolnexus-gen import openapi` reads OpenAPI 3.0 and 3.1. The file is a Swagger 2.0 (or 1.x)\n"
        "document; it is told before anything else in it is read. Nothing is written.\n"
        "Fix: convert it to OpenAPI 3 first (`npx swagger2openapi doc.json -o openapi.json`), then\n"
        "import the result.",
    ),
    "TN471": (
        "OpenAPI operation skipped: body the runtime cannot send",
        "The operation requires a request body in a form the runtime does not send: only media\n"
        "ranges other than */* (image/*, no one type to declare), keys that are no media type\n"
        "(applicationjson), an object schema under a type that is neither JSON, a form, text nor\n"
        "bytes (application/form-data), or an urlencoded or multipart form that is not an object.\n"
        "JSON, urlencoded and multipart/form-data bodies are sent, and so is a body of one other\n"
        "media type: text (text/*, application/xml, application/jwt, application/x-yaml, +xml,\n"
        "...) as the text of a string argument, anything else (application/octet-stream,\n"
        "image/png, application/pdf) as the bytes of its base64 text. The operation is skipped\n"
        "with this warning at its requestBody; the others are imported (an optional body of that\n"
        "kind is left out and said in a note).\n"
        "Fix: none needed; write a spec with a handler of your own, or an http binding with body:\n"
        "text or binary and the content_type the server takes, for that operation.",
    ),
    "TN472": (
        "OpenAPI operation skipped: arguments over the schema budget",
        "The operation's arguments (its parameters and request body, with every shared schema\n"
        "they reach, each counted once) hold more than 64,000 bytes of JSON Schema. Every provider\n"
        "entry carries a tool's whole schema, so such a tool would cost each request tens of\n"
        "thousands of tokens (a create operation of Microsoft Graph reaches its whole entity\n"
        "hierarchy, 450 KB). The operation is skipped with this warning at its requestBody; the\n"
        "others are imported.\n"
        "Fix: none needed; write a spec of your own whose body names only the fields you send.",
    ),
    "TN473": (
        "OpenAPI response schema left out: over the schema budget",
        "The schema of the operation's 2xx response, with every shared schema it reaches (each\n"
        "counted once), holds more than 64,000 bytes of JSON Schema. The tool is imported without\n"
        "an output_schema (this warning, at the response's schema, names each such operation):\n"
        "its result is returned as the server sends it, untyped, and the provider files do not\n"
        "carry the schema to every request. Shared schemas that only such responses reach are not\n"
        "written.\n"
        "Fix: none needed; add an output_schema of your own to the spec if a client needs one.",
    ),
    "TN481": (
        "declared OpenAPI document or overlay not found",
        "A document or an overlay that [tool.toolnexus-gen.openapi.<name>] names is not a file.\n"
        "Paths are relative to pyproject.toml.\nFix: correct the path.",
    ),
    "TN482": (
        "declared document or overlay outside the project",
        "A document or an overlay path leads outside the folder of pyproject.toml (with .., an\n"
        "absolute path or a symbolic link): sync reads the project's own files only.\n"
        "Fix: copy the file into the project and name its path there.",
    ),
    "TN483": (
        "declared document could not be fetched",
        "A document given as an https URL is fetched by sync under the runtime's rules: https only,\n"
        "no credentials in the URL, every address of the host public (no loopback, private,\n"
        "link-local or reserved address, checked after name resolution and on each redirect), at most\n"
        "64 MB within 60 s. The message says which rule refused it, or what the server answered.\n"
        "Nothing is written.\nFix: correct the URL, or save the document in the project.",
    ),
    "TN484": (
        "overlay malformed",
        "An overlay file is not an OpenAPI Overlay 1.0 document: no `overlay: 1.0.x`, no info with\n"
        "title and version, no actions, an action that is not an object, has an unknown key, both\n"
        "update and remove, or neither. Nothing is written.\nFix: correct the overlay there.",
    ),
    "TN485": (
        "overlay target unusable",
        "An overlay action's target is not a JSONPath query (RFC 9535, starting with $), or it\n"
        "selects an object while the update is not one (an update merges into an object, appends\n"
        "to an array and replaces any other value). Nothing is written.\nFix: correct the target.",
    ),
    "TN486": (
        "overlay target selects nothing",
        "An overlay action's target selects no node of the document: the action does nothing. Often\n"
        "the document changed under the overlay (a path renamed, a parameter removed).\n"
        "Fix: update or remove the action.",
    ),
    "TN487": (
        "operations names an unknown operationId",
        "The operations allowlist of [tool.toolnexus-gen.openapi.<name>] names an operationId the\n"
        "document (after its overlays) does not have: that tool is not imported.\n"
        "Fix: correct the operationId, or remove it from the list.",
    ),
    "TN488": (
        "a file is in the way of a synced document",
        "sync would write a file into specs/<name>/ where a file it did not write already is (the\n"
        "folder's .toolnexus-sync.json lists what sync wrote). A file of yours is never replaced, so\n"
        "nothing is written.\nFix: move the file, or give the source another name.",
    ),
    "TN401": (
        "mcp.json cannot be read",
        "The MCP configuration named by mcp_config (default mcp.json) is not JSON: it does not parse,\n"
        "is not UTF-8, repeats a key, or is missing. The message gives the parser's line and column.\n"
        "Fix: correct the file there. Nothing is synced until it parses.",
    ),
    "TN402": (
        "invalid mcp.json setting",
        "A key or value of the MCP configuration is unknown or has the wrong type. Servers go under\n"
        "mcpServers (also servers or mcp); each takes command (a string plus args, or one array), env,\n"
        "envFile, cwd, url, headers, type (stdio, http, streamable-http, sse; transportType too),\n"
        "enabled or disabled, timeout (seconds), tools (an allowlist), disabledTools and prefix; other\n"
        "clients' keys are noted (TN419). Keys starting with x- are ignored. A server's name becomes a\n"
        "folder (specs/<server>/), so it is letters, digits, _ . - and starts with a letter or digit.\n"
        "A wrong entry refuses that server alone: the file's other servers are synced (exit 2).\n"
        "Fix: as the message says.",
    ),
    "TN403": (
        "server with neither command nor url",
        "Each server is either local (command, run over stdio) or remote (url, streamable HTTP), and\n"
        "must say which: it has neither, or both.\nFix: give the server a command or a url.",
    ),
    "TN404": (
        "environment variable not set",
        "A variable in command, args, env, envFile, cwd, url or headers is read from the environment,\n"
        "and it is not set: ${VAR} (${VAR:-default} gives a default), ${env:VAR}, or VS Code's\n"
        "${input:ID}, read from the environment variable ID or ID in capitals (github-token:\n"
        "GITHUB_TOKEN). ${workspaceFolder} and ${userHome} are filled in; other ${...} forms are not\n"
        "variables here. Values are never printed. Only that server is refused.\n"
        "Fix: export the variable, or give it a default.",
    ),
    "TN405": (
        "allowlisted tool not on the server",
        "A server's `tools` allowlist names a tool the server does not list (renamed or removed\n"
        "upstream, or a typo). A warning: the other tools are synced.\n"
        "Fix: correct or remove the name in the allowlist.",
    ),
    "TN406": (
        "two MCP tools get the same spec name",
        "Two tools (of one server or of two) become the same `<prefix>_<tool>` spec name after the\n"
        "prefix and sanitising ([A-Za-z0-9_-]). Both are named; nothing is written.\n"
        "Fix: give one of the servers another `prefix` in mcp.json.",
    ),
    "TN407": (
        "MCP tool name taken by another spec",
        "A tool synced from an MCP server would get the name of a spec that is not part of that\n"
        "server's snapshot (a hand-written spec, or another server's folder). Both are named; nothing\n"
        "is written.\nFix: set a `prefix` for the server in mcp.json, or rename the other spec.",
    ),
    "TN408": (
        "MCP tool without a description",
        "The server lists a tool without a description, which every spec needs (models choose tools\n"
        "by it); the snapshot uses its title, or its name.\nFix: nothing to do; ask upstream for one.",
    ),
    "TN409": (
        "environment variable holds a control character",
        "${VAR} in command, args, cwd, url or headers expands to a value with a control character\n"
        "(most often a trailing newline, from a token read from a file). HTTP forbids it in a url or\n"
        "header, and the transport's error would quote the token; the value is never printed. (env\n"
        "values may be multi-line.) The same check runs when a Toolkit opens the server.\n"
        "Fix: strip the value where it is set (e.g. `export TOKEN=$(tr -d '\\n' < token.txt)`).",
    ),
    "TN410": (
        "MCP server could not be reached",
        "sync could not start the server's command or connect to its url (no such command, a closed\n"
        "port, a refused token, the server exited). Its snapshot is left as it was; the other servers\n"
        "are synced; the exit code is 1.\nFix: run the command or open the url by hand to see why.",
    ),
    "TN411": (
        "MCP server did not answer in time",
        "The server did not finish connecting, or did not finish tools/list, within its timeout\n"
        "(seconds; default 30). The whole set-up (connect, version negotiation, initialize) shares\n"
        "one timeout, and tools/list (every page together) gets the same again, so a server that\n"
        "pages without end is stopped too. Its snapshot is left as it was.\n"
        "Fix: raise `timeout` for the server, or fix it.",
    ),
    "TN412": (
        "MCP protocol error",
        "The server answered with something that is not MCP (output that is not JSON-RPC, an error\n"
        "for tools/list, a cursor that repeats, more than 1,000 pages or 10,000 tools). Its snapshot\n"
        "is left as it was.\n"
        "Fix: check that the command starts an MCP server on stdio (and logs to stderr only).",
    ),
    "TN413": (
        "MCP tool name cannot be a snapshot file",
        "A tool the server lists would get a spec name that no snapshot file may have: empty, starting\n"
        "with _ or . (those are fragments and hidden files, which are never tools, and the file could\n"
        "be one of yours), or longer than 128 characters. The server's snapshot is left as it was;\n"
        "the other servers are synced; the exit code is 1.\n"
        "Fix: leave the tool out with the server's `tools` allowlist in mcp.json, or set a `prefix`.",
    ),
    "TN414": (
        'specs carrying profile "reach", summarised',
        "A source (toolnexus-gen sync, import openapi) writes `profile: reach` into each spec it makes,\n"
        "so that the spec builds for every target while its schemas stay exactly as the source sent\n"
        "them: name aliases, describe, strictify and Gemini's parametersJsonSchema where needed, as\n"
        'under the project\'s profile = "reach". Each step is still a warning at its place, but a build\n'
        "reports the steps (and any other warning) of such specs as this one line per folder, counting\n"
        "what was done; `toolnexus-gen list` shows each step, tool by tool.\nFix: nothing to do.",
    ),
    "TN415": (
        "sourced tool left out: no target can take it",
        "Before it writes, a source builds what it would write with the project's targets and target\n"
        'options (offline, argument models included), under profile "reach". This tool has an error\n'
        "no target can get past (a root that is not an object, a schema the argument model cannot be\n"
        "made from, ...): it is left out of the snapshot or import, named with the build's first error,\n"
        "and the others are written. Every such tool is named in the same run.\n"
        "Fix: ask upstream to fix the schema; or write a spec of your own for the tool.",
    ),
    "TN416": (
        "sourced tool kept for some targets only",
        "As TN415, but the tool's errors all belong to some targets (an MCP outputSchema whose root is\n"
        "not an object, a recursion Gemini cannot take, ...): it is written with `targets: {exclude:\n"
        "[...]}` naming them, and reaches every other configured target.\n"
        "Fix: nothing to do, unless you need the tool on those targets (then ask upstream).",
    ),
    "TN417": (
        "MCP tool no model may call, left out",
        'The server declares `execution.taskSupport: "required"` for the tool: it must be called as an\n'
        "MCP task (create, poll, fetch the result), which the runtime does not do, so every call would\n"
        "fail. Or it marks the tool for its app only (MCP Apps: `_meta.ui.visibility` lists `app` but\n"
        "not `model`): the server's own UI calls it, and a model is never to be offered it. The tool\n"
        "is left out of the snapshot; the server's other tools are synced.\n"
        "Fix: nothing to do; use a task-capable client (or the server's app) for that tool.",
    ),
    "TN418": (
        "sourced tools break a whole-set limit",
        "Each synced tool builds, but the server's tools together break a rule of the whole set (more\n"
        "than 128 tools for OpenAI, 512 Gemini declarations, two tools with one name in a provider's\n"
        "file). The snapshot is written; a build reports the same error.\n"
        "Fix: select tools with the server's `tools` allowlist, or split them into toolsets.",
    ),
    "TN419": (
        "another client's mcp.json key, ignored",
        "mcp.json is read as every client writes it (Claude Desktop, Claude Code, Cursor, VS Code,\n"
        "Cline, Roo Code). A key another client uses that means nothing to a sync or a Toolkit is\n"
        "ignored, and named once with the servers that have it: autoApprove and alwaysAllow (nothing\n"
        "here asks before a call), VS Code's sandboxEnabled and sandbox (the server is started\n"
        "unsandboxed), dev, gallery, version, description, Claude Code's oauth and headersHelper\n"
        "(send a token in headers instead), and unknown top-level keys. Keys that do mean something\n"
        "are honoured: disabled (not enabled), disabledTools (left out), envFile (read), inputs\n"
        "(${input:ID} read from the environment).\nFix: nothing to do; remove the key to silence it.",
    ),
    "TN460": (
        "unknown group or tool in a toolset",
        "A toolset in [tool.toolnexus-gen.toolsets] names a group no spec is in, or a tool no spec\n"
        "defines. The message points at the name in pyproject.toml.\n"
        "Fix: correct the name, or add `groups: [...]` to the specs that belong to the group.",
    ),
    "TN462": (
        "toolset over its token budget (max_tool_tokens)",
        "The estimated tokens of the tool definitions a request sends with this toolset (or with\n"
        "every tool, when there are no toolsets) exceed max_tool_tokens, globally or for the toolset.\n"
        "Estimates are offline (docs: Many tools, Token budgets); `toolnexus-gen list --budget` shows them.\n"
        "Fix: split the toolset, defer rarely used tools (defer_loading: true), or shorten descriptions.",
    ),
    "TN468": (
        "toolset selects no tool (for a target)",
        "Every group and tool a toolset names exists, but none of them is a tool it can send (an\n"
        "error). A warning when it holds tools, but none for one target (each excludes it), or\n"
        "when no tool of the whole set is for a selected target: a request with it carries no\n"
        "tools, so the runtime gives none (to_gemini() writes no empty functionDeclarations\n"
        "wrapper, which Gemini rejects; to_bedrock() raises, since Bedrock rejects a toolConfig\n"
        "without tools) and the loops send the request without tools.\n"
        "Fix: name the tools or groups it should hold, or leave that target out.",
    ),
    "TN811": (
        "invalid [tool.toolnexus-gen.openapi] declaration",
        "A declared OpenAPI source has an unknown key, a value of the wrong type, no document, a\n"
        "name that cannot be a folder name, or a server that is not an absolute http(s) URL. Keys:\n"
        "document, tags, operations, exclude, server, env_prefix, overlays.\nFix: as the message says.",
    ),
    "TN812": (
        "declared document URL not https",
        "A document given as a URL must be https, with a host and no user or password in it (sync\n"
        "fetches it; build never does).\nFix: use its https URL, or save it in the project.",
    ),
    "TN813": (
        "invalid [tool.toolnexus-gen.overrides] entry",
        "An override has an unknown key or a value of the wrong type. Keys: name, description,\n"
        "arguments (arguments.<arg> = {name, description}), hide, fixed, defaults, exclude, targets\n"
        "({only = [...]} or {exclude = [...]}).\nFix: as the message says.",
    ),
    "TN801": (
        "invalid pyproject.toml",
        "The nearest pyproject.toml does not parse as TOML.\nFix: correct it at the given line.",
    ),
    "TN802": (
        "invalid [tool.toolnexus-gen] setting",
        "A key or value in [tool.toolnexus-gen] is unknown or has the wrong type. Keys: specs, out,\n"
        "targets, ignore, name_aliases, profile, builtins, skills, base_url (what relative http URLs\n"
        "are appended to), mcp_config (the MCP servers sync reads), toolsets, hosted, max_tool_tokens,\n"
        "tool_search, and one table per target for its options (e.g. [tool.toolnexus-gen.gemini]\n"
        'schema_field = "parametersJsonSchema"); [tool.toolnexus-gen.breaking] holds use, except,\n'
        "ignore, fail_on, token_threshold, version_policy, version, accept (TOOL:RULE entries, or\n"
        "tables with finding, reason and until), severity (a level per rule) and deprecation\n"
        "(releases and/or days) (toolnexus-gen breaking).\n"
        "Fix: as the message says.",
    ),
}


E, W = Severity.ERROR, Severity.WARNING


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    targets: str  # where it applies, in words
    severity: Severity
    provider_error: str  # the provider's own error text, as users have seen it
    fix: str
    transform: str | None = None  # the opt-in transform that removes the problem, if any

    def explain(self) -> str:
        lines = [
            f"Applies to: {self.targets}. Severity: {self.severity.value}.",
            f"Provider says: {self.provider_error}",
            f"Fix: {self.fix}",
        ]
        if self.transform:
            lines.append(f"Transform: {self.transform} (opt in per target: transforms = [...]).")
        return "\n".join(lines)


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(
            "TN301",
            "property name rejected by Anthropic",
            "anthropic (always)",
            E,
            "tools.0.custom.input_schema.properties: Property keys should match pattern "
            "'^[a-zA-Z0-9_.-]{1,64}$'",
            "rename the property (letters, digits, _ . -; at most 64), or exclude anthropic for "
            "this tool (targets: {exclude: [anthropic]})",
        ),
        Rule(
            "TN302",
            "array schema without items",
            "openai, openai_responses (always); gemini parameters",
            E,
            "OpenAI: In context=('properties', 'paths'), array schema missing items. (a "
            "prefixItems tuple too) / Gemini: ...parameters.properties[tags].items: missing field.",
            'add "items" (for example {"type": "string"}, or {} for anything on openai)',
        ),
        Rule(
            "TN303",
            "object without properties (the root; any object in strict mode)",
            "openai, openai_responses",
            E,
            "In context=(), object schema missing properties.",
            'add "properties" (use {} and "additionalProperties": false for a tool without '
            "arguments, or omit input_schema entirely)",
        ),
        Rule(
            "TN304",
            "description longer than 1024 characters",
            "openai, openai_responses",
            W,
            "Invalid 'tools[6].function.description': string too long. Expected a string with "
            "maximum length 1024 (observed through Azure and relays)",
            "shorten the description; move detail into parameter descriptions",
        ),
        Rule(
            "TN305",
            "combinator at the root of the input schema",
            "openai, openai_responses (anyOf/oneOf/allOf/enum/not); anthropic (anyOf/oneOf/allOf)",
            E,
            "OpenAI: schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/"
            "'not' at the top level. / Anthropic: input_schema does not support oneOf, allOf, or "
            "anyOf at the top level",
            "move the alternatives into a property, or make all properties optional and check the "
            "combination in the handler",
        ),
        Rule(
            "TN306",
            "schema node without a type",
            "gemini parameters; openai strict",
            E,
            "Gemini: ...type: must be specified when not using one_of, any_of or all_of fields / "
            "OpenAI strict: schema must have a 'type' key",
            'add "type" (for example "string")',
        ),
        Rule(
            "TN310",
            "keyword Gemini parameters does not know",
            "gemini (schema_field = parameters)",
            E,
            'Invalid JSON payload received. Unknown name "<keyword>" at \'tools[0].'
            "function_declarations[0].parameters...': Cannot find field.",
            'remove the keyword, use schema_field = "parametersJsonSchema" for gemini, or opt in '
            "to the transform named in the message where one keeps the meaning",
        ),
        Rule(
            "TN311",
            "type array in Gemini parameters",
            "gemini parameters",
            E,
            "Unknown name \"type\" at '...': Proto field is not repeating, cannot start list.",
            'write one type; for [T, "null"] opt in to the nullable transform (type: T, '
            'nullable: true), or use schema_field = "parametersJsonSchema"',
            "nullable",
        ),
        Rule(
            "TN312",
            "enum Gemini parameters cannot carry",
            "gemini parameters",
            E,
            "Invalid value at '...enum[1]' (TYPE_STRING), 2 / ...enum: only allowed for STRING "
            "type / ...enum[1]: cannot be empty",
            'use string values (and type "string"), drop empty strings, or use schema_field = '
            '"parametersJsonSchema"',
        ),
        Rule(
            "TN313",
            "string format Gemini parameters rejects",
            "gemini parameters",
            E,
            "...format: only 'enum' and 'date-time' are supported for STRING type",
            "remove the format (say it in the description), or use schema_field = "
            '"parametersJsonSchema"',
        ),
        Rule(
            "TN314",
            "object without properties in Gemini parameters",
            "gemini parameters",
            E,
            "...parameters.properties: should be non-empty for OBJECT type",
            'give the object at least one property, or use schema_field = "parametersJsonSchema". '
            "(A root with no properties is a tool without arguments: parameters is omitted.)",
        ),
        Rule(
            "TN315",
            "recursive schema that must be inlined",
            "gemini parameters (and the inline_refs transform)",
            E,
            "Gemini parameters has no references: Unknown name \"$ref\" at '...': Cannot find "
            "field.",
            'use schema_field = "parametersJsonSchema" (which allows recursion through optional '
            "properties), or break the cycle",
        ),
        Rule(
            "TN316",
            "additionalProperties in Gemini parameters",
            "gemini parameters",
            E,
            "Invalid JSON payload received. Unknown name \"additionalProperties\" at '...': "
            "Cannot find field.",
            'use schema_field = "parametersJsonSchema" (which keeps it), or remove it',
        ),
        Rule(
            "TN318",
            "too many Gemini function declarations",
            "gemini",
            E,
            "tools[0].function_declarations: [FIELD_INVALID] At most 512 function declarations "
            "can be specified. (Vertex: 128)",
            "define toolsets ([tool.toolnexus-gen.toolsets]) and send one per request "
            "(run_gemini(toolset=...)), or exclude some tools from gemini. With toolsets this is a "
            "warning for the whole set (each toolset is checked on its own: TN461)",
        ),
        Rule(
            "TN319",
            "property name Gemini may reject",
            "gemini",
            W,
            "Gemini parameter names must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$ (documented rule)",
            "rename the property, or exclude gemini for this tool",
        ),
        Rule(
            "TN320",
            "$ref with sibling keywords (Gemini parametersJsonSchema)",
            "gemini (schema_field = parametersJsonSchema)",
            E,
            "$ref 'X' was set alongside unsupported fields. If a schema node has $ref set, then "
            "only description and default can be set alongside it",
            "move the other keywords into the referenced schema, wrap as allOf is not supported "
            "either: or opt in to inline_refs",
            "inline_refs",
        ),
        Rule(
            "TN321",
            "cycle through required properties",
            "gemini parametersJsonSchema",
            E,
            "Cyclic references are unrolled to a limited degree and, as such, may only be used "
            "within non-required properties.",
            "make one property on the cycle optional",
        ),
        Rule(
            "TN322",
            "keyword Gemini parametersJsonSchema ignores",
            "gemini parametersJsonSchema",
            W,
            "(no error: only the documented subset is applied; other keywords are ignored, so "
            "the model is not held to them)",
            "keep the constraint (your handler's model still enforces it) and say it in the "
            "description, so the model knows",
        ),
        Rule(
            "TN330",
            "more than 128 tools for OpenAI",
            "openai, openai_responses",
            E,
            "Invalid 'tools': array too long. Expected an array with maximum length 128",
            "define toolsets ([tool.toolnexus-gen.toolsets]) and send one per request "
            "(run_openai(toolset=...)), or exclude some tools from the openai targets. With "
            "toolsets this is a warning for the whole set (each toolset is checked on its own: "
            "TN461)",
        ),
        Rule(
            "TN340",
            "strict object without additionalProperties: false",
            "openai, openai_responses (strict)",
            E,
            "Invalid schema for function 'f': In context=('properties', 'value'), "
            "'additionalProperties' is required to be supplied and to be false.",
            'add "additionalProperties": false to the object, or drop strict',
        ),
        Rule(
            "TN341",
            "strict object with optional properties",
            "openai, openai_responses (strict)",
            E,
            "Invalid schema for function 'f': In context=(), 'required' is required to be "
            "supplied and to be an array including every key in properties. Missing 'params'.",
            'list every property in "required" and make optional ones nullable (type: [T, "null"]), '
            "or drop strict",
        ),
        Rule(
            "TN342",
            "keyword OpenAI strict mode does not permit",
            "openai, openai_responses (strict)",
            E,
            "Invalid schema for function 'f': In context=('properties', 'data'), 'allOf' is not "
            "permitted.",
            "remove the keyword or drop strict",
        ),
        Rule(
            "TN343",
            "default in OpenAI strict mode",
            "openai, openai_responses (strict)",
            W,
            "In context=('properties', 'error'), 'default' is not permitted. (Azure OpenAI, and "
            "api.openai.com until 2025)",
            "state the default in the description",
        ),
        Rule(
            "TN344",
            "format OpenAI strict mode rejects",
            "openai, openai_responses (strict)",
            E,
            "In context=('properties', 'url'), 'uri' is not a valid format.",
            "use one of date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid, or "
            "remove the format",
        ),
        Rule(
            "TN345",
            "$ref with sibling keywords (OpenAI strict)",
            "openai, openai_responses (strict)",
            E,
            "context=('properties', 'labels'), $ref cannot have keywords {'description'}",
            "move the keywords into the referenced schema, or opt in to inline_refs",
            "inline_refs",
        ),
        Rule(
            "TN346",
            "schema over OpenAI strict-mode limits",
            "openai, openai_responses (strict)",
            E,
            "A schema may have up to 5000 object properties total, with up to 10 levels of "
            "nesting; at most 1000 enum values; 120,000 characters of names and enum values",
            "split the tool, or drop strict",
        ),
        Rule(
            "TN350",
            "strict object without additionalProperties: false",
            "anthropic (strict)",
            E,
            "tools.0.custom: For 'object' type, 'additionalProperties' must be explicitly set to "
            "false",
            'add "additionalProperties": false to the object, or drop strict',
        ),
        Rule(
            "TN351",
            "constraint Anthropic strict mode does not support",
            "anthropic (strict)",
            E,
            "Not supported: minimum, maximum, multipleOf, minLength, maxLength, array constraints "
            "beyond minItems 0 or 1 (a 400 error with details)",
            "remove the constraint (your handler's model still enforces it) or drop strict",
        ),
        Rule(
            "TN352",
            "recursive schema in Anthropic strict mode",
            "anthropic (strict)",
            E,
            "Not supported: recursive schemas (a 400 error with details)",
            "break the cycle or drop strict",
        ),
        Rule(
            "TN353",
            "format Anthropic strict mode rejects",
            "anthropic (strict)",
            E,
            "supported string formats: date-time, time, date, duration, email, hostname, uri, "
            "ipv4, ipv6, uuid",
            "remove the format or drop strict",
        ),
        Rule(
            "TN354",
            "complex enum member in Anthropic strict mode",
            "anthropic (strict)",
            E,
            "enum of primitives only",
            "use primitive enum values or drop strict",
        ),
        Rule(
            "TN355",
            "over Anthropic's per-request strict limits",
            "anthropic (strict)",
            W,
            "Schema is too complex for compilation. (limits: 20 strict tools, 24 optional "
            "parameters, 16 parameters using anyOf or type arrays, across all strict tools)",
            "drop strict from some tools, or send fewer strict tools per request "
            "(run_anthropic(tools=[...])). A warning: the file may hold more than one request sends",
        ),
        Rule(
            "TN356",
            "regex feature Anthropic strict mode rejects",
            "anthropic (strict)",
            E,
            "pattern: no backreferences, lookaround or \\b",
            "simplify the pattern or drop strict",
        ),
        Rule(
            "TN461",
            "toolset over a provider's per-request limit",
            "openai, openai_responses, gemini, anthropic (strict)",
            E,
            "Invalid 'tools': array too long. Expected an array with maximum length 128 (OpenAI); "
            "At most 512 function declarations can be specified (Gemini); Schema is too complex "
            "for compilation (Anthropic strict)",
            "split the toolset, or move some of its tools to another one",
        ),
        Rule(
            "TN463",
            "every tool deferred",
            "anthropic, openai_responses (and the loops' client-side search)",
            E,
            "a request whose every tool has defer_loading: true is rejected (400)",
            "keep at least one tool loaded (defer_loading: false), in the whole set and in each "
            "toolset",
        ),
        Rule(
            "TN464",
            "deferred Anthropic tool with input_examples",
            "anthropic",
            E,
            "tool search is not compatible with input_examples",
            "remove the spec's examples, drop defer_loading, or exclude anthropic for the tool",
        ),
        Rule(
            "TN465",
            "hosted tool on a target that cannot carry it",
            "openai (Chat Completions), bedrock, mcp; any target a hosted tool has no entry for",
            E,
            "Chat Completions takes only function and custom tools; Bedrock Converse only "
            "toolSpec, systemTool and cachePoint",
            "build for targets that carry it, or keep the tool from the target: "
            'targets = {exclude = ["openai"]} in its declaration (web_search = {targets = '
            "{...}} for a well-known one)",
        ),
        Rule(
            "TN466",
            "tool named like a provider tool in the same request",
            "anthropic (hosted and tool search tools), openai, gemini, bedrock (search_tools)",
            E,
            "tool names must be unique within a request; Anthropic's server and tool search tools "
            "have fixed names (web_search, web_fetch, code_execution, bash, memory, "
            "tool_search_tool_bm25, ...)",
            "rename the tool",
        ),
        Rule(
            "TN467",
            "Gemini built-in tools beside function declarations",
            "gemini",
            W,
            "Tool use with function calling is unsupported (Gemini 2.x); Gemini 3 needs "
            "toolConfig.includeServerSideToolInvocations",
            "use a Gemini 3 model (the loops set includeServerSideToolInvocations); for Gemini 2.x, "
            "leave the hosted tool out of gemini",
        ),
        Rule(
            "TN360",
            "MCP outputSchema root not an object",
            "mcp",
            E,
            'outputSchema must be an object schema (type: "object") under MCP 2025-11-25; '
            "clients validate structuredContent against it",
            'wrap the result: {"type": "object", "properties": {"result": ...}}',
        ),
    )
}


@dataclass(frozen=True)
class BreakingRule:
    """A rule of `toolnexus-gen breaking`: one kind of difference between the tool surface at a
    revision and now, and whom it breaks (toolnexus_gen/breaking/rules.py holds its check)."""

    code: str
    title: str
    category: str  # callers, handlers or model
    severity: str  # the default: error, warning or info
    why: str  # what breaks, for whom
    example: str  # a change that triggers it: before -> after
    fix: str

    def explain(self) -> str:
        return "\n".join(
            [
                f"Category: {self.category}. Severity: {self.severity}.",
                f"Why: {self.why}",
                f"Example: {self.example}",
                f"Fix: {self.fix}",
            ]
        )


BREAKING: dict[str, BreakingRule] = {
    rule.code: rule
    for rule in (
        BreakingRule(
            "TN501",
            "tool removed",
            "callers",
            "error",
            "every call of it that was valid (an MCP client's, another agent's, a recorded "
            "conversation or eval replayed) is refused now: unknown tool",
            "specs/get_weather.yaml deleted",
            "keep the tool (mark it deprecated in its description) until its callers moved",
        ),
        BreakingRule(
            "TN502",
            "tool renamed",
            "callers",
            "error",
            "calls under the old name are refused (a tool gone, another with the same schema "
            "added: taken as a rename)",
            "specs/get_weather.yaml -> specs/weather_now.yaml, same input schema",
            "keep a tool under the old name beside the new one until its callers moved",
        ),
        BreakingRule(
            "TN503",
            "required argument added",
            "callers",
            "error",
            "a call without the new argument, valid before, is refused now",
            "required: [city] -> required: [city, country]",
            "make the argument optional with a default that keeps the old meaning",
        ),
        BreakingRule(
            "TN504",
            "optional argument made required",
            "callers",
            "error",
            "a call that left the argument out, valid before, is refused now",
            "units optional -> required: [city, units]",
            "keep it optional (give it a default)",
        ),
        BreakingRule(
            "TN505",
            "argument removed from a closed object",
            "callers",
            "error",
            "the object refuses properties it does not list (additionalProperties: false), so a "
            "call that passes the removed argument is refused",
            "properties: {city, units}, additionalProperties: false -> properties: {city}",
            "keep the argument (ignore it in the handler, say so in its description)",
        ),
        BreakingRule(
            "TN506",
            "argument removed (value ignored now)",
            "callers",
            "warning",
            "the object takes properties it does not list, so a call that passes the removed "
            "argument is still accepted, but its value is dropped: the call means something else",
            "properties: {city, units} -> properties: {city}",
            "keep the argument until callers stop sending it",
        ),
        BreakingRule(
            "TN507",
            "type changed or narrowed",
            "callers",
            "error",
            "a value of the old type is refused now: a type changed (string -> integer), "
            "narrowed (number -> integer), lost from a type list or an anyOf/oneOf (also "
            "through $ref), or null no longer accepted",
            "limit: {type: [integer, 'null']} -> limit: {type: integer}",
            "accept both (anyOf: [old, new]) and convert in the handler",
        ),
        BreakingRule(
            "TN508",
            "enum value removed",
            "callers",
            "error",
            "a call with the removed value (or the old const) is refused now",
            "units: {enum: [c, f, k]} -> units: {enum: [c, f]}",
            "keep the value (map it to a new one in the handler)",
        ),
        BreakingRule(
            "TN509",
            "constraint tightened",
            "callers",
            "error",
            "a value inside the old bounds is refused now: minimum/maximum, exclusive bounds, "
            "multipleOf, minLength/maxLength, pattern, a format the argument model checks "
            "(date-time, date, uri, uuid, email, ...; any other is TN534), minItems/maxItems, "
            "uniqueItems, "
            "min/maxProperties, or a keyword whose change cannot be proven safe (not, if, "
            "patternProperties, ...)",
            "limit: {maximum: 100} -> limit: {maximum: 50}",
            "keep the old bound (clamp in the handler)",
        ),
        BreakingRule(
            "TN510",
            "object closed",
            "callers",
            "error",
            "additionalProperties: false (or unevaluatedProperties: false) is new, at the root "
            "or in a nested object, so a call that carries an argument the object does not list, "
            "valid before, is refused now",
            "an object without additionalProperties -> additionalProperties: false",
            "leave the object open, or accept that extra arguments are refused",
        ),
        BreakingRule(
            "TN511",
            "default changed or removed",
            "callers",
            "warning",
            "a call that leaves the argument out means something else now",
            "units: {default: c} -> units: {default: f}",
            "keep the default; add a new argument for the new behaviour",
        ),
        BreakingRule(
            "TN512",
            "output schema widened for structuredContent readers",
            "callers",
            "warning",
            "a result may hold what it could not (a field removed or made optional, null or "
            "another type, an enum value added, a bound loosened): nothing refuses such a result "
            "(the runtime's MCP server and MCP clients check it against the schema of now), but "
            "code that reads structuredContent as it was may meet a value it does not expect (a "
            "warning); the output schema removed takes structuredContent away (an error)",
            "output_schema: {properties: {temp: {type: number}}, required: [temp]} -> required: []",
            "add result fields, never take them away or widen them",
        ),
        BreakingRule(
            "TN513",
            "strict mode switched",
            "model",
            "warning",
            "with strict off, the provider no longer guarantees that the model's calls match "
            "the schema (more calls come back invalid); with strict on, the schema the model "
            "sees is the strict form",
            "strict: true -> strict: false",
            "switch it deliberately; nothing to fix when intended",
        ),
        BreakingRule(
            "TN514",
            "tool no longer sent to a provider",
            "model",
            "warning",
            "the provider's tool list no longer carries it (targets, a toolset's limits): "
            "models on that provider cannot call it",
            "targets: {exclude: [gemini]} added",
            "nothing to fix when intended",
        ),
        BreakingRule(
            "TN515",
            "oneOf branches overlap now",
            "callers",
            "error",
            "oneOf refuses a value that matches two branches: a branch added that overlaps an "
            "old one, a branch widened into another, or anyOf made oneOf, refuses values that "
            "were valid (shown by a value both take; a warning when the overlap could be neither "
            "shown nor ruled out)",
            "oneOf: [{type: string}, {type: integer}] -> oneOf: [..., {type: number}]",
            "keep the branches apart (a discriminating const, disjoint types), or use anyOf",
        ),
        BreakingRule(
            "TN520",
            "handler method removed or renamed",
            "handlers",
            "error",
            "handler code written against ToolHandlers implements a method that no longer "
            "exists (the tool is gone, renamed, or now runs through a source's binding), and "
            "its import of the argument model fails",
            "specs/get_weather.yaml deleted: ToolHandlers.get_weather and GetWeatherArgs gone",
            "delete the handler method, or keep the tool",
        ),
        BreakingRule(
            "TN521",
            "argument model removed or renamed",
            "handlers",
            "error",
            "code that imports the model class (handlers, tests, clients building arguments) "
            "fails at import and in mypy",
            "tool get_weather renamed weather_now: GetWeatherArgs -> WeatherNowArgs",
            "update the imports",
        ),
        BreakingRule(
            "TN522",
            "handler method added",
            "handlers",
            "warning",
            "ToolHandlers gains an abstract method: a subclass written before it is refused by "
            "Toolkit() (a missing method) and by mypy until it implements it",
            "specs/forecast.yaml added",
            "implement the method (toolnexus-gen scaffold prints its stub)",
        ),
        BreakingRule(
            "TN523",
            "model field type changed",
            "handlers",
            "error",
            "handler code reading args.<field> gets values of another type (str -> datetime, a "
            "new member of a union) and no longer type-checks",
            "when: {type: string} -> when: {type: string, format: date-time} (StrictStr -> "
            "AwareDatetime)",
            "update the handler for the new type",
        ),
        BreakingRule(
            "TN524",
            "model field may be None now",
            "handlers",
            "error",
            "a required argument became optional without a default: args.<field> may be None, "
            "and code that used it as a value no longer type-checks",
            "required: [city, units] -> required: [city] (units: StrictStr -> StrictStr | None)",
            "handle None in the handler, or give the argument a default",
        ),
        BreakingRule(
            "TN525",
            "model field removed",
            "handlers",
            "error",
            "handler code reading args.<field> fails with AttributeError and in mypy",
            "properties: {city, units} -> properties: {city}",
            "update the handler",
        ),
        BreakingRule(
            "TN526",
            "model enum member removed",
            "handlers",
            "error",
            "code that names the enum member (Units.k) fails",
            "units: {enum: [c, f, k]} -> units: {enum: [c, f]}",
            "update the handler",
        ),
        BreakingRule(
            "TN527",
            "result refused now (handler)",
            "handlers",
            "error",
            "the output schema refuses results it took (a required result field added, a "
            "result type narrowed, an enum value removed, a bound tightened, the result object "
            "closed): the runtime's MCP server turns a handler result that does not match "
            "outputSchema into an error result, so a handler written for the revision fails "
            "its calls (a warning when the tool has no mcp entry: nothing checks its results)",
            "output_schema: {properties: {temp}} -> {properties: {temp}, required: [temp]}",
            "return the new shape from the handler, or keep the output schema as it was",
        ),
        BreakingRule(
            "TN528",
            "result may be refused now (binding)",
            "callers",
            "warning",
            "the output schema of a tool run by a binding (an HTTP endpoint, an MCP server) "
            "refuses results it took: an upstream result valid before becomes an error result "
            "in the runtime's MCP server (a warning: the upstream may have changed alike)",
            "an imported operation's response gains a required field",
            "check the upstream returns the new shape; loosen the output schema if not",
        ),
        BreakingRule(
            "TN530",
            "tool added",
            "model",
            "info",
            "models are shown a new tool; nothing that worked breaks",
            "specs/forecast.yaml added",
            "nothing to fix",
        ),
        BreakingRule(
            "TN531",
            "optional argument added",
            "callers",
            "info",
            "every call valid before is still valid",
            "properties: {city} -> properties: {city, units}",
            "nothing to fix",
        ),
        BreakingRule(
            "TN532",
            "more is accepted",
            "callers",
            "info",
            "a widening: a required argument made optional, an enum value added, a bound "
            "loosened, a type widened, an object opened; every call valid before still is",
            "limit: {maximum: 50} -> limit: {maximum: 100}",
            "nothing to fix",
        ),
        BreakingRule(
            "TN533",
            "output schema extended compatibly",
            "callers",
            "info",
            "results that fit the old output schema's readers still do, and results that were "
            "valid still are (an optional result field added, an output schema added)",
            "output_schema: {properties: {temp}} -> {properties: {temp, humidity}}",
            "nothing to fix",
        ),
        BreakingRule(
            "TN534",
            "format annotation changed",
            "model",
            "info",
            "a format nothing checks (int32, int64, float, double, uri-reference, an API's own "
            "name) was added, changed or removed: the generated argument model types it as a "
            "plain int, float or str and the providers refuse no call for it, so every call "
            "valid before still is; the model is shown it (a format the model does check, "
            "date-time, email, uuid, ..., refuses values: TN509)",
            "id: {type: integer} -> id: {type: integer, format: int64}",
            "nothing to fix",
        ),
        BreakingRule(
            "TN540",
            "description or title changed",
            "model",
            "info",
            "what the model reads to choose and call the tool changed: its behaviour may "
            "change; worth a look in review, nothing breaks",
            "description: Current weather -> description: Current weather and alerts",
            "nothing to fix; review the wording",
        ),
        BreakingRule(
            "TN541",
            "examples changed",
            "model",
            "info",
            "the example calls a model is shown changed (Anthropic's input_examples, schema "
            "examples): its calls may change",
            "examples: [{city: Paris}] -> examples: [{city: Chennai}]",
            "nothing to fix; review the examples",
        ),
        BreakingRule(
            "TN542",
            "annotations changed",
            "model",
            "info",
            "MCP annotations (readOnlyHint, destructiveHint, ...) changed: clients decide "
            "whether to ask before a call by them",
            "annotations: {readOnlyHint: true} -> annotations: {}",
            "nothing to fix; check the hints are true",
        ),
        BreakingRule(
            "TN543",
            "token cost changed",
            "model",
            "info",
            "the tool's definition costs more (or fewer) tokens in a provider's requests than "
            "the threshold allows (token_threshold, percent; default 10)",
            "a description four times as long",
            "nothing to fix; keep descriptions as short as they can be",
        ),
        BreakingRule(
            "TN544",
            "deprecated",
            "model",
            "info",
            "the tool (its spec's deprecated, an OpenAPI operation's, MCP annotations) or an "
            "argument (deprecated: true) is deprecated now: callers should move before it goes. "
            "Removing it later is a warning once it stood deprecated for the releases or days "
            "[tool.toolnexus-gen.breaking] deprecation asks (default one release), else an error",
            "deprecated: {since: 1.4.0, note: use forecast}",
            "nothing to fix; say what to use instead",
        ),
        BreakingRule(
            "TN550",
            "breaking change without a major version bump",
            "callers",
            "error",
            "with version_policy on, a callers or handlers error while the project's version "
            "did not get a major bump (the first non-zero part: 1.4 -> 2.0, 0.3 -> 0.4) since "
            "the revision compared against",
            "TN501 tool removed, version 1.4.0 -> 1.5.0",
            "bump the major version, or keep the change compatible",
        ),
    )
}


# Where each range of codes applies; the structural codes name no provider of their own.
AREAS: tuple[tuple[str, str, str, str], ...] = (
    ("TN101", "TN199", "Spec files", "spec files and $ref, for every target"),
    ("TN201", "TN209", "Tool names", "one target each, named in the title"),
    ("TN210", "TN219", "Name aliases", "name_aliases = true, the target named in the message"),
    (
        "TN220",
        "TN299",
        "Reach",
        'the describe and strictify transforms and profile = "reach", the target named in the message',
    ),
    ("TN370", "TN379", "Overrides", "[tool.toolnexus-gen.overrides] in pyproject.toml"),
    ("TN301", "TN399", "Provider rules", ""),
    ("TN401", "TN419", "MCP servers as a source", "mcp.json and toolnexus-gen sync"),
    ("TN420", "TN439", "Built-in tools and skills", "builtins and skills in [tool.toolnexus-gen]"),
    ("TN440", "TN449", "REST tools", "a spec's http binding"),
    ("TN450", "TN459", "OpenAPI import", "toolnexus-gen import openapi"),
    (
        "TN460",
        "TN469",
        "Many tools",
        "toolsets, limits, token budgets, deferred loading and hosted tools",
    ),
    (
        "TN480",
        "TN489",
        "OpenAPI documents as sources",
        "[tool.toolnexus-gen.openapi] and toolnexus-gen sync",
    ),
    ("TN470", "TN489", "OpenAPI import", "toolnexus-gen import openapi"),
    ("TN490", "TN499", "Safety checks", "built-in tools, skills and paths"),
    ("TN500", "TN599", "Breaking changes", "toolnexus-gen breaking and changelog"),
    ("TN800", "TN809", "Configuration", "[tool.toolnexus-gen] in pyproject.toml"),
    (
        "TN811",
        "TN818",
        "Curated sources: configuration",
        "[tool.toolnexus-gen.openapi] and [tool.toolnexus-gen.overrides] in pyproject.toml",
    ),
    ("TN810", "TN819", "The build command", "toolnexus-gen build"),
)


def area(code: str) -> tuple[str, str]:
    """(name, where it applies) of the range a code is in."""
    for first, last, name, where in AREAS:
        if first <= code <= last:
            return name, where
    return "Other", ""


@dataclass(frozen=True)
class Entry:
    """One code as `explain` prints it and the docs show it."""

    code: str
    title: str
    applies: str
    why: str
    fix: str
    severity: str | None = None  # a provider rule's; other codes say it in their example
    provider_error: str | None = None
    transform: str | None = None

    def text(self) -> str:
        lines = [f"Applies to: {self.applies}."]
        if self.severity:
            lines[0] += f" Severity: {self.severity}."
        if self.provider_error:
            lines.append(f"Provider says: {self.provider_error}")
        if self.why:
            lines.append(self.why)
        lines.append(f"Fix: {self.fix}")
        if self.transform:
            lines.append(f"Transform: {self.transform} (opt in per target: transforms = [...]).")
        example = _example(self.code)
        if example is not None:
            lines.append("Example:")
            lines.append(example.text())
        return "\n".join(lines)


def _example(code: str) -> Any:
    from toolnexus_gen.diagnostics.examples import EXAMPLES

    return EXAMPLES.get(code)


def entry(code: str) -> Entry | None:
    if code in RULES:
        rule = RULES[code]
        return Entry(
            code,
            rule.title,
            rule.targets,
            "",
            rule.fix,
            rule.severity.value,
            rule.provider_error,
            rule.transform,
        )
    if code in BREAKING:
        found = BREAKING[code]
        return Entry(
            code,
            found.title,
            f"toolnexus-gen breaking and changelog (category: {found.category})",
            f"{found.why}. Example: {found.example}.",
            found.fix,
            found.severity,
        )
    if code not in CODES:
        return None
    title, text = CODES[code]
    why, _, fix = text.partition("Fix:")
    where = area(code)[1]
    return Entry(code, title, where or "see the message", why.strip(), " ".join(fix.split()))


def all_codes() -> list[str]:
    return sorted({*CODES, *RULES, *BREAKING})


def explain(code: str) -> tuple[str, str] | None:
    """(title, explanation) of a code, or None when there is no such code."""
    found = entry(code)
    return None if found is None else (found.title, found.text())


def breaking_table() -> str:
    """The docs' table of `toolnexus-gen breaking` rules, made from BREAKING."""
    lines = ["| rule | category | severity | what | example |", "|---|---|---|---|---|"]
    for code in sorted(BREAKING):
        rule = BREAKING[code]
        example = rule.example.replace("|", "\\|")
        lines.append(f"| `{code}` | {rule.category} | {rule.severity} | {rule.title} | {example} |")
    return "\n".join(lines) + "\n"


README_START = "<!-- rule table: generated by python -m toolnexus_gen.diagnostics.catalogue -->"
README_END = "<!-- end of rule table -->"


def rule_table() -> str:
    """The README's table of provider rules, made from RULES."""
    lines = [
        "| code | severity | applies to | what | transform that fixes it |",
        "|---|---|---|---|---|",
    ]
    for code in sorted(RULES):
        rule = RULES[code]
        transform = f"`{rule.transform}`" if rule.transform else ""
        lines.append(
            f"| `{code}` | {rule.severity.value} | {rule.targets} | {rule.title} | {transform} |"
        )
    return "\n".join(lines) + "\n"


def with_rule_table(readme: str) -> str:
    """The README text with its rule table replaced by the catalogue's."""
    start = readme.index(README_START) + len(README_START)
    end = readme.index(README_END)
    return readme[:start] + "\n" + rule_table() + readme[end:]


if __name__ == "__main__":  # rewrite a file's rule table in place (or print it)
    if len(sys.argv) > 1:
        from pathlib import Path

        path = Path(sys.argv[1])
        text = path.read_text("utf-8")
        if README_START not in text:  # the docs site renders every table at build time
            print(f"{path} holds no rule table: docs/reference/diagnostics.md is generated")
        else:
            path.write_text(with_rule_table(text), "utf-8")
    else:
        sys.stdout.write(rule_table())
