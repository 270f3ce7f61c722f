"""A failing example for every diagnostic code: the files of a small project and the command
that reports the code. `toolnexus-gen explain` prints it and the docs' diagnostics page shows it;
the tests run every example and check that it reports what `expect` says, so an example can
never go stale.

Add one for each new code in catalogue.py (the tests name any code without one). An example
that cannot run offline in a few seconds says why in `not_run`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TARGETS = "[tool.toolnexus-gen]\ntargets = [{}]\n"


@dataclass(frozen=True)
class Example:
    files: dict[str, str | bytes]  # path in a fresh project folder -> its content
    expect: str  # the start of the line it reports: "specs/x.yaml:2:1: error[TN108]"
    command: str = "toolnexus-gen build"
    env: dict[str, str] = field(default_factory=dict)  # set for the command
    not_run: str | None = None  # why the tests cannot run it, when they cannot
    copies: int = 1  # a file whose path holds {n} stands for this many, n = 0, 1, ...

    def written(self) -> dict[str, str | bytes]:
        """The files as written into the project (each {n} file once per copy)."""
        out: dict[str, str | bytes] = {}
        for path, content in self.files.items():
            for n in range(self.copies if "{n}" in path else 1):
                out[path.replace("{n}", str(n))] = content
        return out

    def text(self) -> str:
        """The example as plain text, as `explain` prints it."""
        lines = []
        for path, content in self.files.items():
            copies = f" ({self.copies} files, n = 0 to {self.copies - 1})" if "{n}" in path else ""
            lines.append(f"--- {path}{copies}")
            if isinstance(content, bytes):
                lines.append(f"(bytes) {content!r}")
            else:
                lines.extend(content.rstrip("\n").split("\n"))
        env = "".join(f"{name}={value!r} " for name, value in self.env.items())
        lines.append(f"$ {env}{self.command}")
        lines.append(f"{self.expect}: ...")
        return "\n".join(lines)


def _targets(*names: str) -> str:
    return TARGETS.format(", ".join(f'"{n}"' for n in names))


def _spec(name: str, text: str, *targets: str, config: str = "") -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {}
    if targets or config:
        files["pyproject.toml"] = (
            _targets(*targets) if targets else "[tool.toolnexus-gen]\n"
        ) + config
    files[f"specs/{name}"] = text
    return files


def _nested(depth: int) -> str:
    inner = "{type: string}"
    for level in range(depth):
        inner = f"{{type: object, properties: {{l{level}: {inner}}}, required: [l{level}], additionalProperties: false}}"
    return inner


def _unions(count: int) -> str:
    props = "".join(f"    p{i}: {{type: [string, 'null']}}\n" for i in range(count))
    names = ", ".join(f"p{i}" for i in range(count))
    return (
        "description: Too many union parameters for Anthropic strict mode\nstrict: true\n"
        "input_schema:\n  type: object\n  additionalProperties: false\n  properties:\n"
        f"{props}  required: [{names}]\n"
    )


def _shared_levels(depth: int) -> str:
    """A schema whose definitions name the next level twice: small, but 2**depth copies once
    its $refs are inlined."""
    levels = "".join(
        f"    L{i}:\n      type: object\n      properties:\n"
        f"        a: {{$ref: '#/$defs/L{i + 1}'}}\n        b: {{$ref: '#/$defs/L{i + 1}'}}\n"
        for i in range(depth)
    )
    return (
        "description: An order\ninput_schema:\n  type: object\n  properties:\n"
        f"    first: {{$ref: '#/$defs/L0'}}\n  $defs:\n{levels}"
        f"    L{depth}: {{type: string}}\n"
    )


MCP_SERVER = '''from mcp.server.mcpserver import MCPServer

server = MCPServer("demo", log_level="CRITICAL")


@server.tool()
def search(query: str) -> str:
    """Search the notes."""
    return query


@server.tool(name="{extra}")
def extra() -> str:
    return ""


if __name__ == "__main__":
    server.run()
'''


def _server(extra: str, entry: str, **more: str | bytes) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        "server.py": MCP_SERVER.replace("{extra}", extra),
        "mcp.json": '{"mcpServers": {"demo": {"command": "python", "args": ["server.py"]'
        + entry
        + "}}}\n",
    }
    files.update(more)
    return files


def _raw(tools: str, config: str = "") -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {}
    if config:
        files["pyproject.toml"] = config
    files["server.py"] = RAW_SERVER.format(tools=tools)
    files["mcp.json"] = '{"mcpServers": {"raw": {"command": "python", "args": ["server.py"]}}}\n'
    return files


def _mcp(server: str) -> dict[str, str | bytes]:
    return {"mcp.json": '{"mcpServers": {' + server + "}}\n"}


PETS = """openapi: 3.0.3
info: {title: Pets, version: "1"}
servers: [{url: "https://pets.example"}]
paths:
  /pets:
    get:
      operationId: list_pets
%s"""


def _large_api(where: str, parts: int) -> dict[str, str | bytes]:
    """A document whose request body (`where` = "body") or response (`where` = "result") names
    `parts` schema files of about 1 KB each: over the import's schema budget (a second
    operation stays within it)."""

    def schema(indent: int) -> str:
        pad = " " * indent
        names = "".join(f"{pad}  p{n}: {{$ref: 'parts/p{n}.json'}}\n" for n in range(parts))
        return f"{pad}type: object\n{pad}properties:\n{names}"

    body = (
        "      requestBody:\n        required: true\n        content:\n"
        "          application/json:\n            schema:\n" + schema(14)
    )
    result = (
        "      responses:\n        '200':\n          description: ok\n          content:\n"
        "            application/json:\n              schema:\n" + schema(16)
    )
    enum = ", ".join(f'"value-{i:04}-of-a-long-list"' for i in range(40))
    return {
        "api.yaml": 'openapi: 3.0.3\ninfo: {title: Pets, version: "1"}\n'
        'servers: [{url: "https://pets.example"}]\npaths:\n  /pets:\n    get:\n'
        "      operationId: list_pets\n      responses: {'200': {description: ok}}\n"
        "    post:\n      operationId: add_pet\n"
        + (body + "      responses: {'200': {description: ok}}\n" if where == "body" else result),
        "parts/p{n}.json": f'{{"type": "string", "enum": [{enum}]}}\n',
    }


READ = '[tool.toolnexus-gen]\nbuiltins = ["read"]\n\n[tool.toolnexus-gen.overrides.%s]\n%s\n'


def _override(tool: str, body: str, **more: str | bytes) -> dict[str, str | bytes]:
    """A project with the built-in `read` tool and one override."""
    files: dict[str, str | bytes] = {
        "specs/now.yaml": "description: Current time\n",
        "pyproject.toml": READ % (tool, body),
    }
    files.update(more)
    return files


PET_DOC = PETS % "      responses: {'200': {description: ok}}\n"
DECLARED = '[tool.toolnexus-gen.openapi.pets]\ndocument = "%s"\n%s'


def _declared(document: str, more: str = "", **files: str | bytes) -> dict[str, str | bytes]:
    """A project that declares an OpenAPI document (apis/pets.yaml) for sync."""
    out: dict[str, str | bytes] = {
        "specs/.keep": "",
        "apis/pets.yaml": PET_DOC,
        "pyproject.toml": DECLARED % (document, more),
    }
    out.update(files)
    return out


OVERLAY = "overlay: 1.0.0\ninfo: {title: Ours, version: '1'}\nactions:\n%s"


STRICT = "strict: true\n"
RAW_SERVER = """# an MCP server on stdio, written by hand: it lists TOOLS as they are
import json
import sys

TOOLS = {tools}

for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "initialize":
        version = request["params"]["protocolVersion"]
        info = {{"name": "raw", "version": "1"}}
        result = {{"protocolVersion": version, "capabilities": {{"tools": {{}}}}, "serverInfo": info}}
    else:
        result = {{"tools": TOOLS}} if request["method"] == "tools/list" else {{}}
    print(json.dumps({{"jsonrpc": "2.0", "id": request["id"], "result": result}}), flush=True)
"""
ODD_SERVER = """# answers every request with a result that is not MCP
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if "id" in request:
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"tools": 42}}
        print(json.dumps(answer), flush=True)
"""
SKILL = "---\nname: {name}\ndescription: {description}\n---\nThe skill's instructions.\n"

EXAMPLES: dict[str, Example] = {
    "TN101": Example(
        {"specs/get_weather.json": '{"description": "Current weather",}\n'},
        "specs/get_weather.json:1:35: error[TN101]",
    ),
    "TN102": Example(
        {"specs/get_weather.yaml": "description: Météo actuelle\n".encode("latin-1")},
        "specs/get_weather.yaml:1:15: error[TN102]",
    ),
    "TN103": Example({"specs/get_weather.yaml": ""}, "specs/get_weather.yaml:1:1: error[TN103]"),
    "TN104": Example(
        {"specs/deep.yaml": "description: Too deep\nx: " + "[" * 70 + "]" * 70 + "\n"},
        "specs/deep.yaml:2:68: error[TN104]",
    ),
    "TN105": Example(
        {"specs/get_weather.yaml": "description: Current weather\ndescription: Weather now\n"},
        "specs/get_weather.yaml:2:1: error[TN105]",
    ),
    "TN106": Example(
        {"specs/get_weather.yaml": "description: !!python/name:os.system\n"},
        "specs/get_weather.yaml:1:14: error[TN106]",
    ),
    "TN107": Example(
        {"specs/get_weather.yaml": "- description: Current weather\n"},
        "specs/get_weather.yaml:1:1: error[TN107]",
    ),
    "TN108": Example(
        {"specs/get_weather.yaml": "description: Current weather\ninput_schem:\n  type: object\n"},
        "specs/get_weather.yaml:2:1: error[TN108]",
    ),
    "TN109": Example(
        {"specs/get_weather.yaml": "description: Current weather\nstrict: yes please\n"},
        "specs/get_weather.yaml:2:9: error[TN109]",
    ),
    "TN110": Example(
        {"specs/get_weather.yaml": 'description: ""\n'},
        "specs/get_weather.yaml:1:14: error[TN110]",
    ),
    "TN111": Example(
        {"specs/get_weather.yaml": "name: weather\ndescription: Current weather\n"},
        "specs/get_weather.yaml:1:7: error[TN111]",
    ),
    "TN112": Example(
        {
            "specs/get_weather.yaml": "description: Current weather\ninput_schema:\n"
            "  type: object\n  properties:\n    city: {type: strng}\n"
        },
        "specs/get_weather.yaml:5:18: error[TN112]",
    ),
    "TN113": Example(
        {"specs/get_weather.yaml": "description: Current weather\ninput_schema:\n  type: string\n"},
        "specs/get_weather.yaml:3:9: error[TN113]",
    ),
    "TN114": Example(
        {
            "specs/get_weather.yaml": "description: Current weather\ninput_schema:\n"
            "  type: object\n  properties:\n    city: {type: string}\n  required: [city]\n"
            "examples:\n  - {town: Chennai}\n"
        },
        "specs/get_weather.yaml:8:5: error[TN114]",
    ),
    "TN115": Example(
        {
            "specs/get_weather.json": '{"description": "Current weather"}\n',
            "specs/get_weather.yaml": "description: Current weather\n",
        },
        "specs/get_weather.yaml:1:1: error[TN115]",
    ),
    "TN116": Example(
        {
            "specs/get-weather.yaml": "description: Current weather\n",
            "specs/get_weather.yaml": "description: Weather now\n",
        },
        "specs/get_weather.yaml:1:1: error[TN116]",
    ),
    "TN117": Example(
        {"specs/get_weather.yaml": "description: Current weather\ntargets: {only: [gemni]}\n"},
        "specs/get_weather.yaml:2:18: error[TN117]",
    ),
    "TN118": Example(
        {"specs/_shared.yaml": "type: string\n"},
        "specs:1:1: warning[TN118]",
    ),
    "TN119": Example(
        {"specs/get_weather.yaml": "description: Current weather\n"},
        "specs/get_weather.yaml:1:1: error[TN119]",
        not_run="no schema that passes the checks before it is known to make "
        "datamodel-code-generator fail; the code is kept for the day one does",
    ),
    "TN120": Example(
        {
            "specs/get_weather.yaml": "description: Current weather\ninput_schema:\n"
            "  type: object\n  properties:\n"
            "    city: {$ref: 'https://example.com/city.json'}\n"
        },
        "specs/get_weather.yaml:5:18: error[TN120]",
    ),
    "TN121": Example(
        {"specs/get_weather.yaml": "description: Current weather\n"},
        "specs/_shared.json:1:1: error[TN121]",
        command="ln -s /etc/hostname specs/_shared.json && toolnexus-gen build",
        not_run="a symbolic link is not a file an example can hold",
    ),
    "TN122": Example(
        {
            "specs/get_weather.yaml": "description: Current weather\ninput_schema:\n"
            "  type: object\n  properties:\n"
            "    city: {type: string, customTypePath: os.system}\n"
        },
        "specs/get_weather.yaml:5:26: error[TN122]",
    ),
    "TN123": Example(
        _raw(
            '[{"name": "get_weather", "description": "Current weather", "inputSchema": '
            '{"type": "object", "properties": {"city": {"type": "string", '
            '"x-python-type": "os.system"}}}}]'
        ),
        "mcp.json:1:17: warning[TN123]",
        command="toolnexus-gen sync",
    ),
    "TN130": Example(
        {
            "specs/_part{n}.json": '{"type": "array", "prefixItems": [' + "{}, " * 999 + "{}]}\n",
            "specs/load_all.yaml": "description: Load everything\ninput_schema:\n"
            "  type: object\n  properties:\n"
            + "".join(f"    p{n}: {{$ref: _part{n}.json}}\n" for n in range(101)),
        },
        "specs/load_all.yaml:3:3: error[TN130]",
        copies=101,
    ),
    "TN201": Example(
        _spec("2fa_code.yaml", "description: A two-factor code\n", "gemini"),
        "specs/2fa_code.yaml:1:1: error[TN201]",
    ),
    "TN202": Example(
        _spec("get.weather.yaml", "description: Current weather\n", "openai"),
        "specs/get.weather.yaml:1:1: error[TN202]",
    ),
    "TN203": Example(
        _spec("get.weather.yaml", "description: Current weather\n", "anthropic"),
        "specs/get.weather.yaml:1:1: error[TN203]",
    ),
    "TN204": Example(
        _spec("get:weather.yaml", "description: Current weather\n", "mcp"),
        "specs/get:weather.yaml:1:1: warning[TN204]",
    ),
    "TN205": Example(
        _spec("get.weather.yaml", "description: Current weather\n", "bedrock"),
        "specs/get.weather.yaml:1:1: error[TN205]",
    ),
    "TN210": Example(
        _spec(
            "github.create_issue.yaml",
            "description: Open an issue\n",
            "openai",
            config="name_aliases = true\n",
        ),
        "specs/github.create_issue.yaml:1:1: warning[TN210]",
    ),
    "TN211": Example(
        _spec(
            "tag.yaml",
            "description: Tag a page\ninput_schema:\n  type: object\n  properties:\n"
            "    $meta: {type: string}\n",
            "anthropic",
            config="name_aliases = true\n",
        ),
        "specs/tag.yaml:5:5: warning[TN211]",
    ),
    "TN212": Example(
        {
            "pyproject.toml": _targets("openai") + "name_aliases = true\n",
            "specs/a.b.yaml": "description: One\n",
            "specs/a_b.yaml": "description: Two\n",
        },
        "specs/a_b.yaml:1:1: error[TN212]",
    ),
    "TN220": Example(
        _spec(
            "fetch.yaml",
            "description: Fetch a page\ninput_schema:\n  type: object\n  properties:\n"
            "    url: {type: string, format: uri}\n",
            "gemini",
            config='\n[tool.toolnexus-gen.gemini]\ntransforms = ["describe"]\n',
        ),
        "specs/fetch.yaml:5:25: warning[TN220]",
    ),
    "TN221": Example(
        _spec(
            "get_weather.yaml",
            "description: Current weather\ninput_schema:\n  type: object\n  properties:\n"
            "    city: {type: string}\n",
            "openai",
            config='\n[tool.toolnexus-gen.openai]\ntransforms = ["strictify"]\n',
        ),
        "specs/get_weather.yaml:1:1: warning[TN221]",
    ),
    "TN222": Example(
        _spec(
            "log_event.yaml",
            "description: Log an event\ninput_schema:\n  type: object\n  properties:\n"
            "    fields: {type: object, additionalProperties: true}\n",
            "gemini",
            config='profile = "reach"\n',
        ),
        "specs/log_event.yaml:5:28: warning[TN222]",
    ),
    "TN223": Example(
        _spec(
            "log_event.yaml",
            "description: Log an event\ninput_schema:\n  type: object\n  properties:\n"
            "    fields: {type: object, additionalProperties: true}\n",
            "anthropic",
            config='profile = "reach"\n',
        ),
        "specs/log_event.yaml:5:13: warning[TN223]",
    ),
    "TN224": Example(
        _spec(
            "log_event.yaml",
            "description: Log an event\ninput_schema: {}\n",
            "mcp",
            config='profile = "reach"\n',
        ),
        "specs/log_event.yaml:2:15: warning[TN224]",
    ),
    "TN225": Example(
        _spec(
            "log_event.yaml",
            "description: Log an event\ninput_schema:\n  type: object\n  additionalProperties: true\n",
            "openai",
            config='\n[tool.toolnexus-gen.openai]\ntransforms = ["describe"]\n',
        ),
        "specs/log_event.yaml:3:3: warning[TN225]",
    ),
    "TN226": Example(
        _spec(
            "book.yaml",
            _unions(17).replace("strict: true\n", ""),
            "anthropic",
            config='\n[tool.toolnexus-gen.anthropic]\ntransforms = ["strictify"]\n',
        ),
        "specs/book.yaml:1:1: warning[TN226]",
    ),
    "TN230": Example(
        _spec("order.yaml", _shared_levels(16), "gemini"),
        "specs/order.yaml:5:13: error[TN230]",
    ),
    "TN301": Example(
        _spec(
            "tag.yaml",
            "description: Tag a page\ninput_schema:\n  type: object\n  properties:\n"
            "    $meta: {type: string}\n",
            "anthropic",
        ),
        "specs/tag.yaml:5:12: error[TN301]",
    ),
    "TN302": Example(
        _spec(
            "tag.yaml",
            "description: Tag a page\ninput_schema:\n  type: object\n  properties:\n"
            "    tags: {type: array}\n",
            "openai",
        ),
        "specs/tag.yaml:5:12: error[TN302]",
    ),
    "TN303": Example(
        _spec(
            "log_event.yaml",
            "description: Log an event\ninput_schema:\n  type: object\n  additionalProperties: true\n",
            "openai",
        ),
        "specs/log_event.yaml:3:3: error[TN303]",
    ),
    "TN304": Example(
        _spec("search.yaml", "description: " + "Search the catalogue. " * 50 + "\n", "openai"),
        "specs/search.yaml:1:14: warning[TN304]",
    ),
    "TN305": Example(
        _spec(
            "find.yaml",
            "description: Find a user\ninput_schema:\n  type: object\n  anyOf:\n"
            "    - {properties: {id: {type: string}}, required: [id]}\n"
            "    - {properties: {email: {type: string}}, required: [email]}\n",
            "openai",
        ),
        "specs/find.yaml:4:3: error[TN305]",
    ),
    "TN306": Example(
        _spec(
            "set_value.yaml",
            "description: Set a value\ninput_schema:\n  type: object\n  properties:\n"
            "    value: {description: Any value}\n",
            "gemini",
        ),
        "specs/set_value.yaml:5:12: error[TN306]",
    ),
    "TN310": Example(
        _spec(
            "set_mode.yaml",
            "description: Set the mode\ninput_schema:\n  type: object\n  properties:\n"
            "    mode: {type: string, const: fast}\n",
            "gemini",
        ),
        "specs/set_mode.yaml:5:26: error[TN310]",
    ),
    "TN311": Example(
        _spec(
            "search.yaml",
            "description: Search\ninput_schema:\n  type: object\n  properties:\n"
            "    query: {type: [string, 'null']}\n",
            "gemini",
        ),
        "specs/search.yaml:5:13: error[TN311]",
    ),
    "TN312": Example(
        _spec(
            "set_level.yaml",
            "description: Set the level\ninput_schema:\n  type: object\n  properties:\n"
            "    level: {type: integer, enum: [1, 2, 3]}\n",
            "gemini",
        ),
        "specs/set_level.yaml:5:28: error[TN312]",
    ),
    "TN313": Example(
        _spec(
            "fetch.yaml",
            "description: Fetch a page\ninput_schema:\n  type: object\n  properties:\n"
            "    url: {type: string, format: uri}\n",
            "gemini",
        ),
        "specs/fetch.yaml:5:25: error[TN313]",
    ),
    "TN314": Example(
        _spec(
            "log_event.yaml",
            "description: Log an event\ninput_schema:\n  type: object\n  properties:\n"
            "    fields: {type: object}\n",
            "gemini",
        ),
        "specs/log_event.yaml:5:13: error[TN314]",
    ),
    "TN315": Example(
        _spec(
            "create_tree.yaml",
            "description: A tree of nodes\ninput_schema:\n  type: object\n  properties:\n"
            "    root: {$ref: '#/$defs/Node'}\n  $defs:\n    Node:\n      type: object\n"
            "      properties:\n        name: {type: string}\n"
            "        children: {type: array, items: {$ref: '#/$defs/Node'}}\n",
            "gemini",
        ),
        "specs/create_tree.yaml:11:41: error[TN315]",
    ),
    "TN316": Example(
        _spec(
            "get_weather.yaml",
            "description: Current weather\ninput_schema:\n  type: object\n  properties:\n"
            "    city: {type: string}\n  additionalProperties: false\n",
            "gemini",
        ),
        "specs/get_weather.yaml:6:3: error[TN316]",
    ),
    "TN318": Example(
        {"pyproject.toml": _targets("gemini"), "specs/tool_{n}.yaml": "description: One of many\n"},
        "specs/tool_99.yaml:1:1: error[TN318]",
        copies=513,
    ),
    "TN319": Example(
        _spec(
            "search.yaml",
            "description: Search\ninput_schema:\n  type: object\n  properties:\n"
            "    max-results: {type: integer}\n",
            "gemini",
        ),
        "specs/search.yaml:5:18: warning[TN319]",
    ),
    "TN320": Example(
        _spec(
            "tag.yaml",
            "description: Tag a page\ninput_schema:\n  type: object\n  properties:\n"
            "    tag: {$ref: '#/$defs/Tag', title: The tag}\n"
            "  $defs:\n    Tag: {type: string}\n",
            "gemini",
            config='\n[tool.toolnexus-gen.gemini]\nschema_field = "parametersJsonSchema"\n',
        ),
        "specs/tag.yaml:5:32: error[TN320]",
    ),
    "TN321": Example(
        _spec(
            "link.yaml",
            "description: A list that never ends\ninput_schema:\n  type: object\n"
            "  properties:\n    head: {$ref: '#/$defs/Node'}\n  required: [head]\n  $defs:\n"
            "    Node:\n      type: object\n      properties:\n        next: {$ref: '#/$defs/Node'}\n"
            "      required: [next]\n",
            "gemini",
            config='\n[tool.toolnexus-gen.gemini]\nschema_field = "parametersJsonSchema"\n',
        ),
        "specs/link.yaml:11:16: error[TN321]",
    ),
    "TN322": Example(
        _spec(
            "search.yaml",
            "description: Search\ninput_schema:\n  type: object\n  properties:\n"
            "    query: {type: string, pattern: '^[a-z]+$'}\n",
            "gemini",
            config='\n[tool.toolnexus-gen.gemini]\nschema_field = "parametersJsonSchema"\n',
        ),
        "specs/search.yaml:5:27: warning[TN322]",
    ),
    "TN330": Example(
        {"pyproject.toml": _targets("openai"), "specs/tool_{n}.yaml": "description: One of many\n"},
        "specs/tool_99.yaml:1:1: error[TN330]",
        copies=129,
    ),
    "TN340": Example(
        _spec(
            "get_weather.yaml",
            "description: Current weather\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    city: {type: string}\n  required: [city]\n",
            "openai",
        ),
        "specs/get_weather.yaml:4:3: error[TN340]",
    ),
    "TN341": Example(
        _spec(
            "get_weather.yaml",
            "description: Current weather\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    city: {type: string}\n  additionalProperties: false\n",
            "openai",
        ),
        "specs/get_weather.yaml:4:3: error[TN341]",
    ),
    "TN342": Example(
        _spec(
            "get_weather.yaml",
            "description: Current weather\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    city: {allOf: [{type: string}]}\n  required: [city]\n"
            "  additionalProperties: false\n",
            "openai",
        ),
        "specs/get_weather.yaml:6:12: error[TN342]",
    ),
    "TN343": Example(
        _spec(
            "get_weather.yaml",
            "description: Current weather\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    city: {type: string, default: Chennai}\n  required: [city]\n"
            "  additionalProperties: false\n",
            "openai",
        ),
        "specs/get_weather.yaml:6:26: warning[TN343]",
    ),
    "TN344": Example(
        _spec(
            "fetch.yaml",
            "description: Fetch a page\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    url: {type: string, format: uri}\n  required: [url]\n"
            "  additionalProperties: false\n",
            "openai",
        ),
        "specs/fetch.yaml:6:25: error[TN344]",
    ),
    "TN345": Example(
        _spec(
            "tag.yaml",
            "description: Tag a page\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    tag: {$ref: '#/$defs/Tag', description: The tag}\n"
            "  required: [tag]\n  additionalProperties: false\n  $defs:\n    Tag: {type: string}\n",
            "openai",
        ),
        "specs/tag.yaml:6:11: error[TN345]",
    ),
    "TN346": Example(
        _spec(
            "nested.yaml",
            "description: Eleven levels of nesting\n"
            + STRICT
            + "input_schema: "
            + _nested(11)
            + "\n",
            "openai",
        ),
        "specs/nested.yaml:3:368: error[TN346]",
    ),
    "TN350": Example(
        _spec(
            "get_weather.yaml",
            "description: Current weather\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    city: {type: string}\n  required: [city]\n",
            "anthropic",
        ),
        "specs/get_weather.yaml:4:3: error[TN350]",
    ),
    "TN351": Example(
        _spec(
            "book.yaml",
            "description: Book nights\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    nights: {type: integer, minimum: 1}\n  required: [nights]\n"
            "  additionalProperties: false\n",
            "anthropic",
        ),
        "specs/book.yaml:6:29: error[TN351]",
    ),
    "TN352": Example(
        _spec(
            "create_tree.yaml",
            "description: A tree of nodes\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    root: {$ref: '#/$defs/Node'}\n  required: [root]\n"
            "  additionalProperties: false\n  $defs:\n    Node:\n      type: object\n"
            "      properties:\n        children: {type: array, items: {$ref: '#/$defs/Node'}}\n"
            "      required: [children]\n      additionalProperties: false\n",
            "anthropic",
        ),
        "specs/create_tree.yaml:13:41: error[TN352]",
    ),
    "TN353": Example(
        _spec(
            "lookup.yaml",
            "description: Look a host up\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    host: {type: string, format: idn-hostname}\n  required: [host]\n"
            "  additionalProperties: false\n",
            "anthropic",
        ),
        "specs/lookup.yaml:6:26: error[TN353]",
    ),
    "TN354": Example(
        _spec(
            "shape.yaml",
            "description: Pick a shape\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    shape: {enum: [{kind: a}, b]}\n  required: [shape]\n"
            "  additionalProperties: false\n",
            "anthropic",
        ),
        "specs/shape.yaml:6:13: error[TN354]",
    ),
    "TN355": Example(
        _spec("book.yaml", _unions(17), "anthropic"),
        "specs/book.yaml:2:9: warning[TN355]",
    ),
    "TN356": Example(
        _spec(
            "name.yaml",
            "description: A doubled letter\n" + STRICT + "input_schema:\n  type: object\n"
            "  properties:\n    name: {type: string, pattern: '^(\\w)\\1$'}\n  required: [name]\n"
            "  additionalProperties: false\n",
            "anthropic",
        ),
        "specs/name.yaml:6:26: error[TN356]",
    ),
    "TN360": Example(
        _spec(
            "list_cities.yaml",
            "description: Every city\noutput_schema:\n  type: array\n  items: {type: string}\n",
            "mcp",
        ),
        "specs/list_cities.yaml:3:3: error[TN360]",
    ),
    "TN401": Example(
        _mcp('"notes": {"command": "python", "args": ["server.py"],}'),
        "mcp.json:1:70: error[TN401]",
        command="toolnexus-gen sync",
    ),
    "TN402": Example(
        _mcp('"notes": {"command": "python", "arguments": ["server.py"]}'),
        "mcp.json:1:48: error[TN402]",
        command="toolnexus-gen sync",
    ),
    "TN403": Example(
        _mcp('"notes": {"args": ["server.py"]}'),
        "mcp.json:1:17: error[TN403]",
        command="toolnexus-gen sync",
    ),
    "TN404": Example(
        _mcp(
            '"github": {"url": "https://api.githubcopilot.com/mcp/", '
            '"headers": {"Authorization": "Bearer ${DOCS_UNSET_TOKEN}"}}'
        ),
        "mcp.json:1:73: error[TN404]",
        command="toolnexus-gen sync",
    ),
    "TN405": Example(
        _server("more", ', "tools": ["search", "serch"]'),
        "mcp.json:1:70: warning[TN405]",
        command="toolnexus-gen sync",
    ),
    "TN406": Example(
        {
            "server.py": MCP_SERVER.replace("{extra}", "search_"),
            "mcp.json": '{"mcpServers": {"a": {"command": "python", "args": ["server.py"], '
            '"prefix": "x"}, "b": {"command": "python", "args": ["server.py"], "prefix": "x"}}}\n',
        },
        "mcp.json:1:83: error[TN406]",
        command="toolnexus-gen sync",
    ),
    "TN407": Example(
        _server("more", "", **{"specs/demo_search.yaml": "description: My own search\n"}),
        "specs/demo_search.yaml:1:1: error[TN407]",
        command="toolnexus-gen sync",
    ),
    "TN408": Example(
        _server("undescribed", ""),
        "mcp.json:1:17: warning[TN408]",
        command="toolnexus-gen sync",
    ),
    "TN409": Example(
        _mcp(
            '"github": {"url": "https://api.githubcopilot.com/mcp/", '
            '"headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}'
        ),
        "mcp.json:1:73: error[TN409]",
        command="toolnexus-gen sync",
        env={"DOCS_TOKEN": "s3cret\n"},
    ),
    "TN410": Example(
        _mcp('"notes": {"command": "no-such-server-command"}'),
        "mcp.json:1:17: error[TN410]",
        command="toolnexus-gen sync",
    ),
    "TN411": Example(
        _mcp(
            '"slow": {"command": "python", "args": ["-c", "import time; time.sleep(30)"], '
            '"timeout": 1}'
        ),
        "mcp.json:1:17: error[TN411]",
        command="toolnexus-gen sync",
    ),
    "TN412": Example(
        _mcp('"odd": {"command": "python", "args": ["server.py"]}') | {"server.py": ODD_SERVER},
        "mcp.json:1:17: error[TN412]",
        command="toolnexus-gen sync",
    ),
    "TN413": Example(
        {
            "server.py": MCP_SERVER.replace("{extra}", "_hidden"),
            "mcp.json": '{"mcpServers": {"demo": {"command": "python", "args": ["server.py"], '
            '"prefix": ""}}}\n',
        },
        "mcp.json:1:17: error[TN413]",
        command="toolnexus-gen sync",
    ),
    "TN414": Example(
        {
            "specs/raw/raw_log_event.json": '{"name": "raw_log_event", "description": "Log an '
            'event", "profile": "reach", "input_schema": {"type": "object", "properties": '
            '{"fields": {"type": "object", "additionalProperties": true}}}}\n'
        },
        "specs/raw/raw_log_event.json:1:69: warning[TN414]",
    ),
    "TN415": Example(
        _raw(
            '[{"name": "count", "description": "Count", "inputSchema": '
            '{"type": "object", "properties": {"n": {"type": "integr"}}}}]'
        ),
        "mcp.json:1:17: warning[TN415]",
        command="toolnexus-gen sync",
    ),
    "TN416": Example(
        _raw(
            '[{"name": "chain", "description": "A chain without end", "inputSchema": '
            '{"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]}}]'
        ),
        "mcp.json:1:17: warning[TN416]",
        command="toolnexus-gen sync",
    ),
    "TN417": Example(
        _raw(
            '[{"name": "report", "description": "A long report", "inputSchema": '
            '{"type": "object"}, "execution": {"taskSupport": "required"}}]'
        ),
        "mcp.json:1:17: warning[TN417]",
        command="toolnexus-gen sync",
    ),
    "TN418": Example(
        _raw(
            '[{"name": "get-page", "description": "A page", "inputSchema": {"type": "object"}}, '
            '{"name": "get_page", "description": "A page", "inputSchema": {"type": "object"}}]'
        ),
        "mcp.json:1:17: warning[TN418]",
        command="toolnexus-gen sync",
        not_run="no small tool list is known that breaks the whole set without one tool to "
        "blame (here sync leaves get_page out, TN415)",
    ),
    "TN419": Example(
        {
            "server.py": MCP_SERVER.replace("{extra}", ""),
            "mcp.json": '{"mcpServers": {"demo": {"command": "python", "args": ["server.py"], '
            '"autoApprove": []}}}\n',
        },
        "mcp.json:1:70: warning[TN419]",
        command="toolnexus-gen sync",
    ),
    "TN420": Example(
        {
            "specs/now.yaml": "description: Current time\n",
            "pyproject.toml": '[tool.toolnexus-gen]\nbuiltins = ["read", "bsh"]\n',
        },
        "pyproject.toml:2:1: error[TN420]",
    ),
    "TN421": Example(
        {
            "pyproject.toml": '[tool.toolnexus-gen]\nbuiltins = ["read"]\n',
            "specs/read.yaml": "description: Read a page of the wiki\n",
        },
        "pyproject.toml:2:1: warning[TN421]",
    ),
    "TN422": Example(
        {
            "specs/now.yaml": "description: Current time\n",
            "pyproject.toml": '[tool.toolnexus-gen]\nskills = "skills"\n',
        },
        "pyproject.toml:2:1: error[TN422]",
    ),
    "TN423": Example(
        {
            "specs/now.yaml": "description: Current time\n",
            "pyproject.toml": '[tool.toolnexus-gen]\nskills = "skills"\n',
            "skills/release-notes/SKILL.md": "# Release notes\nWrite them.\n",
        },
        "skills/release-notes/SKILL.md:1:1: error[TN423]",
    ),
    "TN424": Example(
        {
            "specs/now.yaml": "description: Current time\n",
            "pyproject.toml": '[tool.toolnexus-gen]\nskills = "skills"\n',
            "skills/forms/SKILL.md": SKILL.format(name="PDF Forms", description="Fill in forms"),
        },
        "skills/forms/SKILL.md:2:7: error[TN424]",
    ),
    "TN425": Example(
        {
            "specs/now.yaml": "description: Current time\n",
            "pyproject.toml": '[tool.toolnexus-gen]\nskills = "skills"\n',
            "skills/a/SKILL.md": SKILL.format(name="notes", description="Take notes"),
            "skills/b/SKILL.md": SKILL.format(name="notes", description="Read notes"),
        },
        "skills/b/SKILL.md:2:7: error[TN425]",
    ),
    "TN426": Example(
        {
            "specs/now.yaml": "description: Current time\n",
            "pyproject.toml": '[tool.toolnexus-gen]\nskills = "skills"\n',
            "skills/README.txt": "Skills go here.\n",
        },
        "pyproject.toml:2:1: warning[TN426]",
    ),
    "TN440": Example(
        {
            "specs/get_order.yaml": "description: One order\nhttp:\n  method: FETCH\n"
            "  url: https://shop.example/orders\n"
        },
        "specs/get_order.yaml:3:11: error[TN440]",
    ),
    "TN441": Example(
        {"specs/get_order.yaml": "description: One order\nhttp:\n  url: /orders\n"},
        "specs/get_order.yaml:3:8: error[TN441]",
    ),
    "TN442": Example(
        {
            "specs/get_order.yaml": "description: One order\nhttp:\n"
            "  url: https://shop.example/orders/{order_id}\n"
        },
        "specs/get_order.yaml:3:8: error[TN442]",
    ),
    "TN443": Example(
        {
            "specs/get_order.yaml": "description: One order\nhttp:\n"
            "  url: https://shop.example/orders\n  headers:\n    Authorization: Bearer sk-live-123\n"
        },
        "specs/get_order.yaml:5:20: error[TN443]",
    ),
    "TN444": Example(
        {
            "specs/get_order.yaml": "description: One order\nhttp:\n"
            "  url: https://shop.example/orders\n  headers:\n    Host: internal.example\n"
        },
        "specs/get_order.yaml:5:11: error[TN444]",
    ),
    "TN445": Example(
        {
            "specs/patch_order.yaml": "description: Change an order\nhttp:\n"
            "  method: PATCH\n  url: https://shop.example/orders\n"
            "  content_type: text/plain\n"
        },
        "specs/patch_order.yaml:5:17: error[TN445]",
    ),
    "TN450": Example(
        {"api.yaml": 'openapi: 3.0.0\ninfo: {title: Pets, version: "1"}\npaths: []\n'},
        "api.yaml:3:8: error[TN450]",
        command="toolnexus-gen import openapi api.yaml",
    ),
    "TN455": Example(
        {
            "api.yaml": PETS.replace("https://pets.example", "https://shop:s3cret@pets.example")
            % "      responses: {'200': {description: ok}}\n"
        },
        "api.yaml:3:17: warning[TN455]",
        command="toolnexus-gen import openapi api.yaml",
    ),
    "TN470": Example(
        {"api.yaml": 'swagger: "2.0"\ninfo: {title: Pets, version: "1"}\npaths: {}\n'},
        "api.yaml:1:1: error[TN470]",
        command="toolnexus-gen import openapi api.yaml",
    ),
    "TN471": Example(
        {
            "api.yaml": PETS % "      requestBody:\n        required: true\n        content:\n"
            "          image/*:\n            schema: {type: string, format: binary}\n"
            "      responses: {'200': {description: ok}}\n"
        },
        "api.yaml:9:9: error[TN471]",
        command="toolnexus-gen import openapi api.yaml",
    ),
    "TN472": Example(
        _large_api("body", 60),
        "api.yaml:12:9: warning[TN472]",
        command="toolnexus-gen import openapi api.yaml",
        copies=60,
    ),
    "TN473": Example(
        _large_api("result", 60),
        "api.yaml:17:17: warning[TN473]",
        command="toolnexus-gen import openapi api.yaml",
        copies=60,
    ),
    "TN490": Example(
        {"pyproject.toml": '[tool.toolnexus-gen]\nskills = "skills"\n'},
        "skills/notes/SKILL.md:1:1: error[TN490]",
        command="mkdir -p skills/notes && ln -s /etc/hostname skills/notes/SKILL.md && "
        "toolnexus-gen build",
        not_run="a symbolic link is not a file an example can hold",
    ),
    "TN491": Example(
        {
            "pyproject.toml": '[tool.toolnexus-gen]\nskills = "skills"\n',
            "skills/notes/SKILL.md": "---\nname: notes\ndescription: Take notes\n---\nWrite.\n",
        },
        "skills/notes/hosts:1:1: warning[TN491]",
        command="ln -s /etc/hosts skills/notes/hosts && toolnexus-gen build",
        not_run="a symbolic link is not a file an example can hold",
    ),
    "TN451": Example(
        {
            "api.yaml": PETS
            % "      responses:\n        '200':\n          content:\n            application/json:\n"
            "              schema: {$ref: '#/components/schemas/Pets'}\n"
        },
        "api.yaml:12:30: error[TN451]",
        command="toolnexus-gen import openapi api.yaml",
    ),
    "TN452": Example(
        {
            "api.yaml": PETS % "      responses: {'200': {description: ok}}\n"
            "    post:\n      operationId: list_pets\n      responses: {'200': {description: ok}}\n"
        },
        "api.yaml:10:20: warning[TN452]",
        command="toolnexus-gen import openapi api.yaml",
    ),
    "TN453": Example(
        {
            "api.yaml": PETS
            % "      parameters:\n        - {name: limit, in: query, schema: {type: integr}}\n"
            "      responses: {'200': {description: ok}}\n"
        },
        "api.yaml:9:44: error[TN453]",
        command="toolnexus-gen import openapi api.yaml",
    ),
    "TN454": Example(
        {
            "api.yaml": PETS % "      responses: {'200': {description: ok}}\n"
            "security: [{'key$': []}]\ncomponents:\n  securitySchemes:\n"
            "    key$: {type: apiKey, in: header, name: X-Key}\n"
        },
        "api.yaml:12:5: error[TN454]",
        command="toolnexus-gen import openapi api.yaml",
    ),
    "TN460": Example(
        {
            "pyproject.toml": '[tool.toolnexus-gen.toolsets]\nsupport = {groups = ["biling"]}\n',
            "specs/get_invoice.yaml": "description: One invoice\ngroups: [billing]\n",
        },
        "pyproject.toml:2:22: error[TN460]",
    ),
    "TN461": Example(
        {
            "pyproject.toml": _targets("anthropic")
            + '\n[tool.toolnexus-gen.toolsets]\nbooking = {tools = ["book"]}\n',
            "specs/book.yaml": _unions(17),
        },
        "pyproject.toml:5:1: error[TN461]",
    ),
    "TN462": Example(
        {
            "pyproject.toml": "[tool.toolnexus-gen]\nmax_tool_tokens = 10\n",
            "specs/get_weather.yaml": "description: Current weather\n",
        },
        "pyproject.toml:2:1: warning[TN462]",
    ),
    "TN463": Example(
        _spec("search.yaml", "description: Search\ndefer_loading: true\n", "anthropic"),
        "specs/search.yaml:2:16: error[TN463]",
    ),
    "TN464": Example(
        _spec(
            "search.yaml",
            "description: Search\ndefer_loading: true\ninput_schema:\n  type: object\n"
            "  properties:\n    q: {type: string}\nexamples:\n  - {q: tea}\n",
            "anthropic",
        )
        | {"specs/now.yaml": "description: Current time\n"},
        "specs/search.yaml:8:3: error[TN464]",
    ),
    "TN465": Example(
        {
            "pyproject.toml": "[tool.toolnexus-gen.hosted]\n"
            'search = {openai = {type = "web_search"}}\n',
            "specs/now.yaml": "description: Current time\n",
        },
        "pyproject.toml:2:11: error[TN465]",
    ),
    "TN466": Example(
        {
            "pyproject.toml": _targets("anthropic")
            + "\n[tool.toolnexus-gen.hosted]\nweb_search = true\n",
            "specs/web_search.yaml": "description: Search our intranet\n",
        },
        "specs/web_search.yaml:1:1: error[TN466]",
    ),
    "TN467": Example(
        {
            "pyproject.toml": _targets("gemini")
            + "\n[tool.toolnexus-gen.hosted]\nweb_search = true\n",
            "specs/now.yaml": "description: Current time\n",
        },
        "pyproject.toml:5:1: warning[TN467]",
    ),
    "TN468": Example(
        {
            "pyproject.toml": '[tool.toolnexus-gen.toolsets]\nops = {tools = ["restart"]}\n',
            "specs/restart.yaml": "description: Restart\ntargets: {exclude: [gemini]}\n",
            "specs/now.yaml": "description: Current time\n",
        },
        "pyproject.toml:2:1: warning[TN468]",
    ),
    "TN801": Example(
        {"pyproject.toml": '[tool.toolnexus-gen\nspecs = "specs"\n'},
        "pyproject.toml:1:20: error[TN801]",
    ),
    "TN370": Example(
        _override("now", 'description = "What time it is"'), "pyproject.toml:4:1: error[TN370]"
    ),
    "TN371": Example(
        _override("read", 'arguments.file = { name = "name" }'), "pyproject.toml:5:1: error[TN371]"
    ),
    "TN372": Example(
        _override("read", 'arguments.offset = { name = "limit" }'),
        "pyproject.toml:5:1: error[TN372]",
    ),
    "TN373": Example(_override("read", 'hide = ["path"]'), "pyproject.toml:5:1: error[TN373]"),
    "TN374": Example(
        _override("read", 'defaults = { limit = "ten" }'), "pyproject.toml:5:14: error[TN374]"
    ),
    "TN375": Example(_override("raed", 'description = "Read"'), "pyproject.toml:4:1: error[TN375]"),
    "TN376": Example(
        _override(
            "issues_lock",
            'description = "Lock an issue"',
            **{
                "specs/github/.toolnexus-sync.json": '{"files": [], "gone": {"issues_lock": '
                '"removed upstream by `sync` of openapi.github"}}\n'
            },
        ),
        "pyproject.toml:4:1: warning[TN376]",
    ),
    "TN377": Example(
        _override(
            "list_items",
            'hide = ["region"]',
            **{
                "specs/list_items.yaml": "description: List items\n"
                "http: {method: GET, url: 'https://api.example/items'}\n"
                "input_schema:\n  type: object\n  properties:\n"
                "    region: {type: string, default: '${AWS_REGION}'}\n"
            },
        ),
        "pyproject.toml:5:1: warning[TN377]",
    ),
    "TN378": Example(
        _declared(
            "apis/pets.yaml",
            **{
                "specs/pets/.toolnexus-sync.json": '{"files": ["list_pets.json"]}\n',
                "specs/pets/list_pets.json": '{"description": "GET /pets", "http": {"method": '
                '"GET", "url": "/pets", "base_url": "https://old.pets.example"}}\n',
            },
        ),
        "pyproject.toml:2:1: error[TN378]",
        command="toolnexus-gen sync",
    ),
    "TN379": Example(
        _declared(
            "apis/pets.yaml",
            **{
                "apis/pets.yaml": PETS
                % "      parameters: [{name: key, in: query, schema: {type: string}}]\n"
                "      responses: {'200': {description: ok}}\n",
                "specs/pets/.toolnexus-sync.json": '{"files": ["list_pets.json"]}\n',
                "specs/pets/list_pets.json": '{"description": "GET /pets", "http": {"method": '
                '"GET", "url": "/pets", "base_url": "https://pets.example", "headers": {"key": '
                '"{key}"}}}\n',
            },
        ),
        "pyproject.toml:2:1: warning[TN379]",
        command="toolnexus-gen sync",
    ),
    "TN481": Example(
        _declared("apis/missing.yaml"),
        "pyproject.toml:2:1: error[TN481]",
        command="toolnexus-gen sync",
    ),
    "TN482": Example(
        _declared("../pets.yaml"), "pyproject.toml:2:1: error[TN482]", command="toolnexus-gen sync"
    ),
    "TN483": Example(
        _declared("https://127.0.0.1/pets.yaml"),
        "pyproject.toml:2:1: error[TN483]",
        command="toolnexus-gen sync",
    ),
    "TN484": Example(
        _declared(
            "apis/pets.yaml",
            'overlays = ["apis/ours.yaml"]\n',
            **{
                "apis/ours.yaml": "overlay: 2.0.0\ninfo: {title: Ours, version: '1'}\nactions: []\n"
            },
        ),
        "apis/ours.yaml:1:10: error[TN484]",
        command="toolnexus-gen sync",
    ),
    "TN485": Example(
        _declared(
            "apis/pets.yaml",
            'overlays = ["apis/ours.yaml"]\n',
            **{"apis/ours.yaml": OVERLAY % "  - target: $.paths[\n    remove: true\n"},
        ),
        "apis/ours.yaml:4:13: error[TN485]",
        command="toolnexus-gen sync",
    ),
    "TN486": Example(
        _declared(
            "apis/pets.yaml",
            'overlays = ["apis/ours.yaml"]\n',
            **{"apis/ours.yaml": OVERLAY % "  - target: $.paths['/cats']\n    remove: true\n"},
        ),
        "apis/ours.yaml:4:13: warning[TN486]",
        command="toolnexus-gen sync",
    ),
    "TN487": Example(
        _declared("apis/pets.yaml", 'operations = ["list_pets", "list_cats"]\n'),
        "pyproject.toml:3:1: warning[TN487]",
        command="toolnexus-gen sync",
    ),
    "TN488": Example(
        _declared("apis/pets.yaml", **{"specs/pets/list_pets.json": '{"description": "mine"}\n'}),
        "pyproject.toml:1:1: error[TN488]",
        command="toolnexus-gen sync",
    ),
    "TN811": Example(
        {
            "specs/now.yaml": "description: Current time\n",
            "pyproject.toml": DECLARED % ("apis/pets.yaml", 'operation = ["list_pets"]\n'),
        },
        "pyproject.toml:3:1: error[TN811]",
    ),
    "TN812": Example(
        {
            "specs/now.yaml": "description: Current time\n",
            "pyproject.toml": DECLARED % ("http://pets.example/openapi.yaml", ""),
        },
        "pyproject.toml:2:1: error[TN812]",
    ),
    "TN813": Example(_override("read", 'rename = "open"'), "pyproject.toml:5:1: error[TN813]"),
    "TN802": Example(
        {"pyproject.toml": '[tool.toolnexus-gen]\nspec = "specs"\n'},
        "pyproject.toml:2:1: error[TN802]",
    ),
}
