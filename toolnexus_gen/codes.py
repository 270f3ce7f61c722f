"""Every diagnostic code, with what it means and how to fix it (`toolnexus-gen explain CODE`)."""

from __future__ import annotations

CODES: dict[str, tuple[str, str]] = {
    "TN101": (
        "malformed JSON or YAML",
        "The file does not parse. The message gives the parser's complaint and its line and column.\n"
        "Fix: correct the syntax there. NaN and Infinity are not JSON numbers and are refused too.",
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
        "The document is nested deeper than the limit, or YAML aliases expand it past the value\n"
        "limit (an 'alias bomb').\nFix: flatten the schema with $defs and $ref.",
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
        "strict, annotations and targets. Keys starting with x- are ignored; anything else is a typo\n"
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
        "A $ref points outside the spec folder, to a URL (http:, https:, file:), or to nothing.\n"
        "toolnexus-gen never fetches schemas over the network.\n"
        "Fix: copy the schema into a `_shared/` file under the spec folder and reference it relatively.",
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
    "TN801": (
        "invalid pyproject.toml",
        "The nearest pyproject.toml does not parse as TOML.\nFix: correct it at the given line.",
    ),
    "TN802": (
        "invalid [tool.toolnexus-gen] setting",
        "A key or value in [tool.toolnexus-gen] is unknown or has the wrong type. Keys: specs, out,\n"
        "targets, ignore, and one table per target for its options (e.g. [tool.toolnexus-gen.gemini]\n"
        'schema_field = "parametersJsonSchema").\nFix: as the message says.',
    ),
}
