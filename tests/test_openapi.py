"""`toolnexus-gen import openapi`: real public documents (tests/fixtures/openapi, licences beside
them) import and build for all six targets, each provider file accepted by its SDK's types; the
imported tools call a real server on 127.0.0.1 as the document says; OpenAPI 3.0 and 3.1 schemas
become JSON Schema 2020-12 faithfully; bad documents are located errors and nothing is written."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from conftest import ROOT, cli
from rest_server import Answer, serving
from sdk_check import assert_accepted

FIXTURES = ROOT / "tests" / "fixtures" / "openapi"
# document -> (tools, [tool.toolnexus-gen] settings it needs for all six targets, import flags)
DOCUMENTS: dict[str, tuple[int, str, tuple[str, ...]]] = {
    # default settings: each imported spec carries `profile: reach` (what each provider needs)
    "petstore.yaml": (19, "", ()),
    "scalar_galaxy.yaml": (9, "", ()),
    "twilio_studio_v2.json": (19, "", ()),
    "kubernetes_authorization_v1.json": (5, 'base_url = "https://kubernetes.default.svc"\n', ()),
}
_built: dict[str, Path] = {}


def import_openapi(project: Path, document: Path, *flags: str) -> Any:
    project.mkdir(parents=True, exist_ok=True)
    return cli("import", "openapi", str(document), "--specs", "specs", *flags, cwd=project)


def built(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The document imported and built (all of them at once, the first time): its project."""
    if not _built:
        builds = {}
        for document, (tools, settings, flags) in DOCUMENTS.items():
            project = tmp_path_factory.mktemp(document.split(".")[0])
            result = import_openapi(project, FIXTURES / document, *flags)
            assert result.exit_code == 0, result.stderr
            assert len(list((project / "specs").glob("*.yaml"))) == tools
            (project / "pyproject.toml").write_text("[tool.toolnexus-gen]\n" + settings)
            package = f"{document.split('.')[0]}_tools"
            builds[document] = (project, build_process(project, package))
        for document, (project, process) in builds.items():  # each builds with its workers
            _, stderr = process.communicate(timeout=600)
            assert process.returncode == 0, stderr
            assert " error[" not in stderr
            _built[document] = project
    return _built[name]


def build_process(project: Path, package: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", package]
    return subprocess.Popen(
        command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def load_package(project: Path, package: str) -> Any:
    if str(project) not in sys.path:
        sys.path.insert(0, str(project))
    return importlib.import_module(package)


def spec(project: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((project / "specs" / f"{name}.yaml").read_text())
    return data


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_real_documents_import_and_build_for_every_target(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    project = built(name, tmp_path_factory)
    out = project / f"{name.split('.')[0]}_tools"
    files = {p.stem: json.loads(p.read_text()) for p in (out / "schemas").glob("*.json")}
    assert {"gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"} <= set(files)
    assert_accepted(files)
    assert len(files["openai"]) == DOCUMENTS[name][0]
    handlers = (out / "handlers.py").read_text()
    assert "    def " not in handlers  # every tool is a REST call: nothing to implement


def test_petstore_specs_say_what_the_document_says(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    project = built("petstore.yaml", tmp_path_factory)
    get = spec(project, "getPetById")
    assert get["http"] == {
        "method": "GET",
        "url": "/pet/{petId}",
        "base_url": "https://petstore3.swagger.io/api/v3",
        "headers": {"api_key": "${TOOLNEXUS_SWAGGER_PETSTORE_API_KEY}"},  # the first it can carry
    }
    assert get["description"] == "Find pet by ID.\n\nReturns a single pet."
    assert get["input_schema"]["required"] == ["petId"]
    assert get["output_schema"]["type"] == "object"  # #/components/schemas/Pet, at the root
    # the components it reaches are shared files beside the specs, not copies in each spec
    assert get["output_schema"]["properties"]["category"] == {
        "$ref": "_swagger_petstore/Category.json"
    }
    assert "$defs" not in get["output_schema"]
    assert (project / "specs" / "_swagger_petstore" / "Tag.json").is_file()
    assert get["annotations"] == {"readOnlyHint": True}
    add = spec(project, "addPet")  # a required object body: its properties are arguments
    assert list(add["input_schema"]["properties"]) == [
        "id",
        "name",
        "category",
        "photoUrls",
        "tags",
        "status",
    ]
    assert add["input_schema"]["required"] == ["name", "photoUrls"]
    # petstore_auth under the title's SWAGGER_PETSTORE: the word is not repeated
    assert add["http"]["headers"] == {"Authorization": "Bearer ${TOOLNEXUS_SWAGGER_PETSTORE_AUTH}"}
    assert "body" not in add["http"]  # POST: json by default
    form = spec(project, "updatePetWithForm")  # POST without a body: arguments to the query
    assert form["http"]["body"] == "none"
    listed = spec(project, "findPetsByStatus")["output_schema"]  # an array: MCP's wrapper
    assert (listed["type"], listed["required"]) == ("object", ["result"])
    assert listed["properties"]["result"]["type"] == "array"


def test_the_summary_names_the_variables_and_what_was_left_out(tmp_path: Path) -> None:
    result = import_openapi(tmp_path, FIXTURES / "scalar_galaxy.yaml")
    assert result.exit_code == 0, result.stderr
    assert "headers read from the environment when a tool is called:" in result.output
    assert (
        "  TOOLNEXUS_SCALAR_GALAXY_BEARER_AUTH: a bearer token (bearerAuth), sent as Authorization: Bearer, "
        "to https://galaxy.scalar.com\n"
    ) in result.output
    # its multipart body is carried; the image's `examples` map (Example Objects) is left out
    assert "examples: not an array of examples (a map of Example Objects?): left out" in (
        result.stderr
    )
    assert "9 specs imported into specs" in result.output, result.output
    twilio = import_openapi(tmp_path / "t", FIXTURES / "twilio_studio_v2.json")
    assert "security scheme 'accountSid_authToken' is not carried (http basic)" in twilio.stderr


def test_imported_petstore_tools_call_the_server_as_the_document_says(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = load_package(built("petstore.yaml", tmp_path_factory), "petstore_tools")
    monkeypatch.setenv("TOOLNEXUS_SWAGGER_PETSTORE_API_KEY", "key-1234567890")
    monkeypatch.setenv("TOOLNEXUS_SWAGGER_PETSTORE_AUTH", "token-1234567890")
    pet = {"id": 7, "name": "Rex", "photoUrls": ["u"], "status": "sold"}
    with serving() as server:
        server.route("GET", "/pet/7", Answer(200, pet))
        server.route("POST", "/pet", lambda seen: Answer(200, {**seen.json, "id": 8}))
        server.route("GET", "/pet/findByStatus", Answer(200, [pet]))
        server.route("DELETE", "/pet/7", Answer(200, b""))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        assert tk.execute_sync("getPetById", {"petId": 7}).data == pet
        new = {"name": "Bo", "photoUrls": ["p"], "category": {"id": 1, "name": "Dogs"}}
        assert tk.execute_sync("addPet", new).data == {**new, "id": 8}
        assert tk.execute_sync("findPetsByStatus", {"status": "sold"}).data == [pet]
        tk.execute_sync("updatePetWithForm", {"petId": 7, "name": "Max"})
        # the api_key header is the security scheme's: never a model's argument
        assert "api_key" not in pkg.DeletePetArgs.model_fields
        tk.execute_sync("deletePet", {"petId": 7})
        missing = tk.execute_sync("getOrderById", {"orderId": 3})
        tk.close()
    get, add, find, update, delete, order = server.seen
    assert (get.target, get.headers["api_key"]) == ("/pet/7", "key-1234567890")
    assert (add.method, add.target, add.json) == ("POST", "/pet", new)
    assert add.headers["Authorization"] == "Bearer token-1234567890"
    assert find.target == "/pet/findByStatus?status=sold"
    assert (update.method, update.target, update.body) == ("POST", "/pet/7?name=Max", b"")
    assert (delete.method, delete.target) == ("DELETE", "/pet/7")
    assert "api_key" not in delete.headers  # its security is the OAuth token
    assert delete.headers["Authorization"] == "Bearer token-1234567890"
    assert order.target == "/store/order/3"
    assert missing.is_error and missing.output.startswith("HTTP 404: ")


SID = "FW" + "0" * 32


def test_twilio_form_bodies_and_your_own_client_for_basic_auth(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    project = built("twilio_studio_v2.json", tmp_path_factory)
    update = spec(project, "UpdateFlow")
    assert update["http"]["body"] == "form"
    assert update["http"]["base_url"] == "https://studio.twilio.com"  # the path item's server
    # the body is optional but has a required property: one argument, not flattened
    assert update["http"]["body_arg"] == "body"
    assert update["input_schema"]["required"] == ["Sid"]
    assert update["input_schema"]["properties"]["body"]["required"] == ["Status"]
    flow = update["output_schema"]["properties"]
    assert flow["friendly_name"]["type"] == ["string", "null"]  # nullable: true
    pkg = load_package(project, "twilio_studio_v2_tools")
    bad = pkg.Toolkit(pkg.ToolHandlers()).execute_sync("UpdateFlow", {"Sid": "FW1"})
    assert bad.is_error and "Sid" in bad.output  # the document's pattern, checked first
    with serving() as server:
        server.route("POST", f"/v2/Flows/{SID}", Answer(200, {"sid": SID}))
        client = httpx.AsyncClient(auth=("AC123", "auth-token"))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url, http_client=client)
        args = {"Sid": SID, "body": {"Status": "published", "FriendlyName": "Main"}}
        assert tk.execute_sync("UpdateFlow", args).data == {"sid": SID}
        tk.close()
        assert not client.is_closed
        from toolnexus_runtime import run_sync

        run_sync(client.aclose())
    (seen,) = server.seen
    assert seen.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert seen.form == [("Status", "published"), ("FriendlyName", "Main")]
    assert seen.headers["Authorization"].startswith("Basic ")


def test_kubernetes_allof_components_and_a_relative_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    project = built("kubernetes_authorization_v1.json", tmp_path_factory)
    review = spec(project, "createAuthorizationV1NamespacedLocalSubjectAccessReview")
    http = review["http"]
    assert (
        http["url"]
        == "/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews"
    )
    assert "base_url" not in http  # no server in the document: the project's base_url
    assert http["query"] == ["dryRun", "fieldManager", "fieldValidation", "pretty"]
    schema = review["input_schema"]
    # dotted component names (io.k8s.api...) become plain shared file names; allOf kept
    shared = project / "specs" / "_kubernetes"
    assert (shared / "ObjectMeta.json").is_file()
    assert not any("." in p.stem for p in shared.iterdir())
    assert schema["properties"]["body"] == {"$ref": "_kubernetes/LocalSubjectAccessReview.json"}
    review_schema = json.loads((shared / "LocalSubjectAccessReview.json").read_text())
    assert review_schema["properties"]["metadata"]["allOf"] == [{"$ref": "ObjectMeta.json"}]
    tools = load_package(project, "kubernetes_authorization_v1_tools")
    binding = tools.TOOLS["getAuthorizationV1APIResources"].binding["http"]
    assert binding["base_url"] == "https://kubernetes.default.svc"


# -- schemas: OpenAPI 3.0 and 3.1 to JSON Schema 2020-12 --------------------------------------


def document(version: str = "3.0.3", **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": version,
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.test/v1"}],
        "paths": {},
    }
    doc.update(extra)
    return doc


def imported(tmp_path: Path, doc: dict[str, Any] | str, *flags: str) -> dict[str, Any]:
    path = tmp_path / ("doc.yaml" if isinstance(doc, str) else "doc.json")
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
    result = import_openapi(tmp_path / "p", path, *flags)
    assert result.exit_code == 0, result.stderr
    out: dict[str, Any] = {"_result": result}
    for file in sorted((tmp_path / "p" / "specs").glob("*.yaml")):
        out[file.stem] = yaml.safe_load(file.read_text())
    return out


def test_openapi_30_schemas_become_json_schema_2020_12(tmp_path: Path) -> None:
    thing = {
        "type": "object",
        "required": ["id", "name", "secret"],
        "x-internal": True,
        "discriminator": {"propertyName": "kind"},
        "xml": {"name": "thing"},
        "properties": {
            "id": {"type": "integer", "readOnly": True},
            "name": {"type": "string", "nullable": True, "example": "n"},
            "kind": {"type": "string", "enum": ["a", "b"], "nullable": True},
            "score": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 9},
            "other": {"allOf": [{"$ref": "#/components/schemas/Part"}], "nullable": True},
            "part": {"$ref": "#/components/schemas/Part", "description": "ignored in 3.0"},
            "secret": {"type": "string", "writeOnly": True},
            "any": {"nullable": True, "description": "anything"},
        },
    }
    doc = document(
        paths={
            "/things": {
                "post": {
                    "operationId": "makeThing",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}
                        },
                    },
                    "responses": {
                        "201": {
                            "description": "made",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Thing"}
                                }
                            },
                        }
                    },
                }
            }
        },
        components={"schemas": {"Thing": thing, "Part": {"type": "object", "properties": {}}}},
    )
    make = imported(tmp_path, doc)["makeThing"]
    inputs = make["input_schema"]
    assert list(inputs["properties"]) == ["name", "kind", "score", "other", "part", "secret", "any"]
    assert inputs["required"] == ["name", "secret"]  # readOnly id left out of the input
    assert inputs["properties"]["name"] == {"type": ["string", "null"], "examples": ["n"]}
    assert inputs["properties"]["kind"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert inputs["properties"]["score"] == {"type": "number", "maximum": 9, "exclusiveMinimum": 0}
    assert inputs["properties"]["other"] == {
        "anyOf": [{"allOf": [{"$ref": "_t/Part.json"}]}, {"type": "null"}]
    }
    assert inputs["properties"]["part"] == {"$ref": "_t/Part.json"}  # 3.0: $ref siblings ignored
    assert inputs["properties"]["any"] == {"description": "anything"}  # already takes null
    output = make["output_schema"]
    assert "secret" not in output["properties"] and "id" in output["properties"]  # writeOnly out
    assert output["required"] == ["id", "name"]
    assert not {"x-internal", "discriminator", "xml"} & set(output)
    # Thing differs between a request and a response: two shared files; Part is one
    shared = tmp_path / "p" / "specs" / "_t"
    assert sorted(p.name for p in shared.iterdir()) == [
        "Part.json",
        "Thing.json",
        "Thing_input.json",
    ]


def test_openapi_31_keeps_ref_siblings_and_types(tmp_path: Path) -> None:
    doc = document(
        "3.1.0",
        paths={
            "/a/{id}": {
                "get": {
                    "operationId": "getA",
                    "parameters": [
                        {
                            "name": "id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "integer"},
                        },
                        {
                            "name": "v",
                            "in": "query",
                            "schema": {
                                "$ref": "#/components/schemas/V",
                                "description": "kept in 3.1",
                            },
                        },
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        components={"schemas": {"V": {"type": ["string", "null"], "examples": ["x"]}}},
    )
    get = imported(tmp_path, doc)["getA"]
    assert get["input_schema"]["properties"]["v"] == {
        "$ref": "_t/V.json",
        "description": "kept in 3.1",
    }
    shared = json.loads((tmp_path / "p" / "specs" / "_t" / "V.json").read_text())
    assert shared == {"type": ["string", "null"], "examples": ["x"]}


def test_parameters_and_body_share_one_flat_argument_object(tmp_path: Path) -> None:
    body = {"type": "object", "properties": {"id": {"type": "string"}, "n": {"type": "integer"}}}
    doc = document(
        paths={
            "/items/{id}": {
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "put": {
                    "parameters": [
                        {"name": "id", "in": "query", "schema": {"type": "string"}},
                        {"name": "X-Req", "in": "header", "schema": {"type": "string"}},
                        {"name": "Accept", "in": "header", "schema": {"type": "string"}},
                        {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": body}},
                    },
                    "responses": {"204": {"description": "done"}},
                },
            }
        }
    )
    found = imported(tmp_path, doc)
    put = found["put_items_id"]  # no operationId: the method and path
    assert put["http"] == {
        "method": "PUT",
        "url": "/items/{id_path}",  # the path parameter gives way to the query one
        "base_url": "https://api.test/v1",
        "headers": {"X-Req": "{X-Req}"},  # Accept is ignored, as OpenAPI says
        "query": ["id"],
        "body_arg": "body",  # the body has an `id` too: it is one argument
    }
    assert list(put["input_schema"]["properties"]) == ["id_path", "id", "X-Req", "body"]
    assert put["input_schema"]["required"] == ["id_path", "body"]
    assert "cookie parameter 'session' is not carried" in found["_result"].stderr


def test_names_servers_and_security(tmp_path: Path) -> None:
    long_id = "list" + "Everything" * 8
    doc = document(
        servers=[
            {
                "url": "{scheme}://{host}/api",
                "variables": {"scheme": {"default": "https"}, "host": {"default": "h.test"}},
            }
        ],
        security=[{"queryKey": []}, {"cookieKey": [], "headerKey": []}],
        components={
            "securitySchemes": {
                "queryKey": {"type": "apiKey", "in": "query", "name": "key"},
                "cookieKey": {"type": "apiKey", "in": "cookie", "name": "sid"},
                "headerKey": {"type": "apiKey", "in": "header", "name": "X-Key"},
            }
        },
        paths={
            "/a": {
                "get": {
                    "operationId": "pets.list-all",
                    "responses": {"200": {"description": "ok"}},
                },
                "post": {
                    "operationId": long_id,
                    "responses": {"200": {"description": "ok"}},
                    "security": [],
                },
            }
        },
    )
    found = imported(tmp_path, doc)
    assert set(found) == {"_result", "pets_list_all", found_long(found)}
    name = found_long(found)
    assert len(name) == 64 and name.startswith("listEverything")
    listed = found["pets_list_all"]["http"]
    assert listed["base_url"] == "https://h.test/api"  # server variables at their defaults
    assert listed["headers"] == {
        "Cookie": "sid=${TOOLNEXUS_T_COOKIE_KEY}",
        "X-Key": "${TOOLNEXUS_T_HEADER_KEY}",
    }
    assert "headers" not in found[name]["http"]  # security: [] means none
    (tmp_path / "again").mkdir()
    again = imported(tmp_path / "again", doc, "--server", "http://127.0.0.1:8080/x/")
    assert again["pets_list_all"]["http"]["base_url"] == "http://127.0.0.1:8080/x"


def found_long(found: dict[str, Any]) -> str:
    return next(n for n in found if n.startswith("listEverything"))


def test_a_document_never_chooses_the_environment_variables_sent_to_its_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # scheme names that are real variables: their values would have gone to the document's
    # own server; every name now starts with TOOLNEXUS_ and the API's title
    doc = document(
        info={"title": "Weather API", "version": "1"},
        servers=[{"url": "https://weather.test"}],
        security=[{"openai_api_key": [], "HOME": [], "awsSecretAccessKey": []}],
        components={
            "securitySchemes": {
                "openai_api_key": {"type": "http", "scheme": "bearer"},
                "HOME": {"type": "apiKey", "in": "header", "name": "X-Home"},
                "awsSecretAccessKey": {"type": "apiKey", "in": "cookie", "name": "k"},
            }
        },
        paths={"/w": {"get": {"operationId": "w", "responses": {}}}},
    )
    monkeypatch.setenv("TOOLNEXUS_WEATHER_HOME", "set-before-the-import")
    found = imported(tmp_path, doc)
    assert found["w"]["http"]["headers"] == {
        "Authorization": "Bearer ${TOOLNEXUS_WEATHER_OPENAI_API_KEY}",
        "X-Home": "${TOOLNEXUS_WEATHER_HOME}",
        "Cookie": "k=${TOOLNEXUS_WEATHER_AWS_SECRET_ACCESS_KEY}",
    }
    out = found["_result"]
    for var in ("OPENAI_API_KEY", "HOME", "AWS_SECRET_ACCESS_KEY"):
        assert f"  TOOLNEXUS_WEATHER_{var}: " in out.output
    assert "to https://weather.test" in out.output
    assert (
        "note: TOOLNEXUS_WEATHER_HOME is already set in this environment: the tools will send it "
        "to https://weather.test; if it holds a credential for another service, import again "
        "with --env-prefix NAME"
    ) in out.stderr
    (tmp_path / "mine").mkdir()
    mine = imported(tmp_path / "mine", doc, "--env-prefix", "acme")
    assert mine["w"]["http"]["headers"]["Authorization"] == "Bearer ${ACME_OPENAI_API_KEY}"
    bad = import_openapi(tmp_path / "bad", tmp_path / "doc.json", "--env-prefix", "1-x")
    assert bad.exit_code == 2
    assert "--env-prefix '1-x' must be a variable name" in bad.stderr


@pytest.mark.parametrize(
    ("title", "scheme", "unrelated"),
    [
        ("Anthropic", "apiKey", "ANTHROPIC_API_KEY"),
        ("OpenAI", "API_KEY", "OPENAI_API_KEY"),
        ("AWS", "secretAccessKey", "AWS_SECRET_ACCESS_KEY"),
        ("GitHub", "token", "GITHUB_TOKEN"),
        ("", "HOME", "HOME"),
    ],
)
def test_a_title_and_a_scheme_name_cannot_spell_an_unrelated_secret(
    tmp_path: Path, title: str, scheme: str, unrelated: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a document titled "Anthropic" with a scheme "apiKey" made ANTHROPIC_API_KEY, and every
    # call then sent that variable's value to the document's own server
    monkeypatch.setenv(unrelated, "sk-unrelated-secret-value")
    doc = document(
        info={"title": title, "version": "1"},
        servers=[{"url": "https://evil.test"}],
        security=[{scheme: []}],
        components={"securitySchemes": {scheme: {"type": "apiKey", "in": "header", "name": "X-K"}}},
        paths={"/w": {"get": {"operationId": "w", "responses": {}}}},
    )
    found = imported(tmp_path, doc)
    value = found["w"]["http"]["headers"]["X-K"]
    assert value.startswith("${TOOLNEXUS_") and value != f"${{{unrelated}}}"
    assert unrelated not in found["_result"].output.split()


@pytest.mark.parametrize(
    ("scheme", "message", "line"),
    [
        (  # a cookie name carrying its own ${VAR}: read at run time, listed nowhere
            {"type": "apiKey", "in": "cookie", "name": "theme=${AWS_SECRET_ACCESS_KEY}; sid"},
            "security scheme 'key': the cookie name 'theme=${AWS_SECRET_ACCESS_KEY}; sid' is "
            "not a cookie name",
            "name",
        ),
        (
            {"type": "apiKey", "in": "header", "name": "X-K: ${HOME}"},
            "security scheme 'key': the header name 'X-K: ${HOME}' is not a header name",
            "name",
        ),
        (
            {"type": "apiKey", "in": "header", "name": "Host"},
            "security scheme 'key': the header name 'Host' is set by the HTTP client itself",
            "name",
        ),
    ],
)
def test_a_security_scheme_that_would_inject_into_a_template_is_refused(
    tmp_path: Path, scheme: dict[str, Any], message: str, line: str
) -> None:
    doc = document(
        security=[{"key": []}],
        components={"securitySchemes": {"key": scheme}},
        paths={"/w": {"get": {"operationId": "w", "responses": {}}}},
    )
    path = tmp_path / "doc.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = import_openapi(tmp_path / "p", path)
    assert result.exit_code == 2
    assert "error[TN454]: " + message in result.stderr
    assert f"(at /components/securitySchemes/key/{line})" in result.stderr
    assert not (tmp_path / "p" / "specs").exists()


@pytest.mark.parametrize("name", ["a${HOME}", "a{b}", "a;b", "a=b", "a\u0007b"])
def test_a_security_scheme_name_with_template_syntax_is_refused(tmp_path: Path, name: str) -> None:
    doc = document(
        security=[{name: []}],
        components={"securitySchemes": {name: {"type": "http", "scheme": "bearer"}}},
        paths={"/w": {"get": {"operationId": "w", "responses": {}}}},
    )
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    result = import_openapi(tmp_path / "p", path)
    assert result.exit_code == 2
    assert "error[TN454]: security scheme name " in result.stderr
    assert not (tmp_path / "p" / "specs").exists()


def test_header_parameters_a_tool_may_not_set_are_left_out_and_said(tmp_path: Path) -> None:
    params = [
        {"name": name, "in": "header", "schema": {"type": "string"}}
        for name in ("Host", "Content-Length", "Transfer-Encoding", "Proxy-Authorization", "X Y")
    ] + [{"name": "X-Trace", "in": "header", "schema": {"type": "string"}}]
    doc = document(
        paths={"/w": {"post": {"operationId": "w", "parameters": params, "responses": {}}}}
    )
    found = imported(tmp_path, doc)
    assert found["w"]["http"]["headers"] == {"X-Trace": "{X-Trace}"}
    assert set(found["w"]["input_schema"]["properties"]) == {"X-Trace"}
    stderr = found["_result"].stderr
    for name in ("Host", "Content-Length", "Transfer-Encoding", "Proxy-Authorization"):
        assert f"note: w: header parameter {name!r} is not carried: it is set by the HTTP" in stderr
    assert "note: w: header parameter 'X Y' is not carried: it is not a header name" in stderr


def test_the_summary_never_sends_the_documents_control_characters_to_the_terminal(
    tmp_path: Path,
) -> None:
    media = "text/x\u001b[2J\u001b[31m\u009b1A\u202e\nnote: forged line"
    doc = document(
        paths={
            "/w": {
                "post": {
                    "operationId": "w",
                    "requestBody": {"content": {media: {"schema": {"type": "string"}}}},
                    "responses": {},
                }
            }
        }
    )
    found = imported(tmp_path, doc)
    stderr = found["_result"].stderr
    assert "\x1b" not in stderr and "\x9b" not in stderr and "\u202e" not in stderr
    assert "\nnote: forged" not in stderr  # a line the document wrote
    assert "(its body is text/x\\x1b[2J\\x1b[31m\\x9b1A\\u202e\\nnote: forged line)" in stderr


def test_printable_keeps_text_and_escapes_what_a_terminal_would_obey() -> None:
    from toolnexus_gen.diagnostics import printable

    text = "plain: é, 中, tabs\tand\nlines"
    assert printable(text, lines=True) == text
    assert printable("a\x1b[2Kb\u202ec\x9bd", lines=True) == "a\\x1b[2Kb\\u202ec\\x9bd"
    assert printable("one\ntwo") == "one\\ntwo"


@pytest.mark.parametrize(
    ("schemas", "where", "chain"),
    [
        (
            {"A": {"allOf": [{"$ref": "#/components/schemas/A"}]}},
            "A",
            "#/components/schemas/A -> #/components/schemas/A",
        ),
        (
            {
                "A": {"anyOf": [{"$ref": "#/components/schemas/B"}, {"type": "string"}]},
                "B": {"$ref": "#/components/schemas/A"},
            },
            "A",
            "#/components/schemas/A -> #/components/schemas/B -> #/components/schemas/A",
        ),
    ],
)
@pytest.mark.parametrize("place", ["response", "body"])
def test_a_schema_that_reaches_itself_with_nothing_in_between_is_located(
    tmp_path: Path, schemas: dict[str, Any], where: str, chain: str, place: str
) -> None:
    ref = {"$ref": "#/components/schemas/A"}
    operation: dict[str, Any] = {"operationId": "a", "responses": {}}
    if place == "response":
        operation["responses"] = {
            "200": {"description": "ok", "content": {"application/json": {"schema": ref}}}
        }
    else:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": ref}},
        }
    doc = document(components={"schemas": schemas}, paths={"/a": {"post": operation}})
    path = tmp_path / "doc.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = import_openapi(tmp_path / "p", path)
    assert result.exit_code == 2, result.output  # was a RecursionError traceback
    assert "Traceback" not in result.stderr
    assert f"error[TN451]: this schema reaches itself with nothing in between ({chain}" in (
        result.stderr
    )
    assert f"(at /components/schemas/{where})" in result.stderr
    assert not (tmp_path / "p" / "specs").exists()


def test_a_recursive_schema_with_something_in_between_still_imports(tmp_path: Path) -> None:
    node = {
        "type": "object",
        "properties": {
            "kids": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            "next": {"allOf": [{"$ref": "#/components/schemas/Node"}]},
        },
    }
    ok = {
        "description": "ok",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}},
    }
    doc = document(
        components={"schemas": {"Node": node}},
        paths={"/n": {"get": {"operationId": "n", "responses": {"200": ok}}}},
    )
    found = imported(tmp_path, doc)
    assert found["n"]["output_schema"]["properties"]["next"] == {
        "allOf": [{"$ref": "_t/Node.json"}]
    }
    shared = json.loads((tmp_path / "p" / "specs" / "_t" / "Node.json").read_text())
    assert shared["properties"]["kids"]["items"] == {"$ref": "Node.json"}  # beside itself


def test_a_component_many_operations_share_is_meta_validated_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a shared 560 KB component took a minute to meta-validate per operation: 200 operations
    # took hours; each schema object is now checked once per import, and once by the build that
    # checks what it wrote, however many operations reach it
    from toolnexus_gen.toolspec import metaschema

    shared = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(50)}}
    ok = {
        "description": "ok",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Big"}}},
    }
    paths = {
        f"/o{i}": {"get": {"operationId": f"op{i}", "responses": {"200": ok}}} for i in range(30)
    }
    doc = document(components={"schemas": {"Big": shared}}, paths=paths)
    checked: list[Any] = []
    real = metaschema._plainly_valid

    def counting(node: Any) -> bool:
        if isinstance(node, dict) and "p49" in node.get("properties", {}):
            checked.append(node)
        return real(node)

    monkeypatch.setattr(metaschema, "_plainly_valid", counting)
    found = imported(tmp_path, doc)
    assert len(found) == 31 and len(found["op7"]["output_schema"]["properties"]) == 50
    # never once per operation: once by the import's check, once by the build checking what it
    # wrote (a plain object may need no validator at all)
    assert len(checked) <= 2


def test_a_relative_server_leaves_the_base_url_to_the_project(tmp_path: Path) -> None:
    doc = document(
        servers=[{"url": "/api/v3"}], paths={"/p": {"get": {"operationId": "p", "responses": {}}}}
    )
    found = imported(tmp_path, doc)
    assert found["p"]["http"]["url"] == "/api/v3/p" and "base_url" not in found["p"]["http"]
    assert "the document's server is relative (/api/v3): set base_url" in found["_result"].stderr


def test_tag_filter(tmp_path: Path) -> None:
    result = import_openapi(tmp_path / "a", FIXTURES / "petstore.yaml", "--tag", "store")
    assert result.exit_code == 0, result.stderr
    names = sorted(p.stem for p in (tmp_path / "a" / "specs").glob("*.yaml"))
    assert names == ["deleteOrder", "getInventory", "getOrderById", "placeOrder"]
    none = import_openapi(tmp_path / "b", FIXTURES / "petstore.yaml", "--tag", "nope")
    assert none.exit_code == 2
    assert "no operation is tagged nope (tags: pet, store, user)" in none.stderr
    assert not (tmp_path / "b" / "specs").exists()


def test_importing_twice_gives_the_same_files(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        assert import_openapi(tmp_path / folder, FIXTURES / "scalar_galaxy.yaml").exit_code == 0
    first = {
        p.relative_to(tmp_path / "a"): p.read_bytes()
        for p in (tmp_path / "a").rglob("*.*")
        if p.is_file()
    }
    again = {
        p.relative_to(tmp_path / "b"): p.read_bytes()
        for p in (tmp_path / "b").rglob("*.*")
        if p.is_file()
    }
    assert first == again and len(first) > 9


def test_the_first_build_checks_no_schema_the_import_found_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import's check leaves what it found valid in the build's memo, and no argument
    model: the first build checks no schema again and makes the models."""
    from toolnexus_gen.toolspec import validate

    (tmp_path / "pyproject.toml").write_text('[tool.toolnexus-gen]\nspecs = "specs"\n')
    assert import_openapi(tmp_path, FIXTURES / "petstore.yaml").exit_code == 0
    assert sorted(p.name for p in (tmp_path / "tools").iterdir()) == [".toolnexus-gen.cache"]
    from toolnexus_gen.incremental.cache import load_memo

    memo = load_memo(tmp_path / "tools")
    assert memo.valid and not memo.models

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a schema checked again")

    monkeypatch.setattr(validate.MetaCheck, "errors", refuse)  # the build must check none
    monkeypatch.setattr(validate, "_check_schema", refuse)
    monkeypatch.setenv("TOOLNEXUS_GEN_JOBS", "1")
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "tools").rglob("models/*.py"))) > 3
    monkeypatch.undo()
    # a folder the build did not make is left as it is (the build will refuse it, not the import)
    theirs = tmp_path / "theirs"
    (theirs / "tools").mkdir(parents=True)
    (theirs / "tools" / "notes.txt").write_text("mine\n")
    (theirs / "pyproject.toml").write_text('[tool.toolnexus-gen]\nspecs = "specs"\n')
    assert import_openapi(theirs, FIXTURES / "petstore.yaml").exit_code == 0
    assert sorted(p.name for p in (theirs / "tools").iterdir()) == ["notes.txt"]


# -- bad input: located errors, nothing written -----------------------------------------------


def refused(tmp_path: Path, text: str, suffix: str = ".yaml") -> str:
    path = tmp_path / f"api{suffix}"
    path.write_text(text)
    result = import_openapi(tmp_path / "p", path)
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "p" / "specs").exists()
    return str(result.stderr)


def test_malformed_yaml_is_located(tmp_path: Path) -> None:
    stderr = refused(tmp_path, "openapi: 3.0.0\npaths:\n  /a: [unclosed\n")
    assert "api.yaml:4:1: error[TN101]: invalid YAML" in stderr


def test_not_openapi_3(tmp_path: Path) -> None:
    stderr = refused(tmp_path, '{"swagger": "2.0", "paths": {}}', ".json")
    assert "api.json:1:1: error[TN470]: this is a Swagger 2.0 document, not OpenAPI 3" in stderr


def test_a_broken_ref_names_the_file_pointer_and_line(tmp_path: Path) -> None:
    text = (
        "openapi: 3.0.0\n"
        "info: {title: t, version: '1'}\n"
        "paths:\n"
        "  /pets:\n"
        "    get:\n"
        "      responses:\n"
        "        200:\n"
        "          description: ok\n"
        "          content:\n"
        "            application/json:\n"
        "              schema:\n"
        "                $ref: '#/components/schemas/Nope'\n"
    )
    stderr = refused(tmp_path, text)
    assert (
        "api.yaml:12:23: error[TN451]: $ref '#/components/schemas/Nope' points to nothing in "
        "this document (operation skipped: get_pets (GET /pets)) "
        "(at /paths/~1pets/get/responses/200/content/application~1json/schema/$ref)"
    ) in stderr


def test_a_ref_to_a_url_or_out_of_the_documents_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.yaml").write_text("Limit: {name: limit, in: query}\n")
    for ref, message in (
        ("https://example.test/common.yaml#/Limit", "is a URL: nothing is fetched"),
        ("../secret.yaml#/Limit", "leaves the document's folder"),
        ("common.yaml#/Limit", "names a file that does not exist"),
    ):
        doc = document(paths={"/a": {"get": {"parameters": [{"$ref": ref}], "responses": {}}}})
        (tmp_path / "doc").mkdir(exist_ok=True)
        stderr = refused(tmp_path / "doc", json.dumps(doc, indent=2), ".json")
        assert f"error[TN451]: $ref {ref!r} {message}" in stderr
        assert "(at /paths/~1a/get/parameters/0/$ref)" in stderr


def test_a_schema_invalid_after_conversion_is_located(tmp_path: Path) -> None:
    doc = document(
        paths={
            "/a": {
                "get": {
                    "parameters": [{"name": "f", "in": "query", "schema": {"type": "file"}}],
                    "responses": {},
                }
            }
        }
    )
    stderr = refused(tmp_path, json.dumps(doc, indent=2), ".json")
    assert "error[TN453]: type: not valid JSON Schema once converted: 'file' is not valid" in stderr
    assert "(at /paths/~1a/get/parameters/0/schema)" in stderr


def test_two_operations_with_one_name(tmp_path: Path) -> None:
    doc = document(
        paths={
            "/a": {"get": {"operationId": "pets.list", "responses": {}}},
            "/b": {"get": {"operationId": "pets_list", "responses": {}}},
        }
    )
    found = imported(tmp_path, doc)  # the first is imported, the second skipped and said
    assert set(found) == {"_result", "pets_list"}
    assert found["pets_list"]["http"]["url"] == "/a"
    assert "warning[TN452]: GET /b and GET /a both give the tool name 'pets_list'" in (
        found["_result"].stderr
    )


def test_existing_specs_are_never_replaced_without_force(tmp_path: Path) -> None:
    assert import_openapi(tmp_path, FIXTURES / "scalar_galaxy.yaml").exit_code == 0
    mine = tmp_path / "specs" / "getPlanet.yaml"
    mine.write_text("description: edited by hand\n")
    again = import_openapi(tmp_path, FIXTURES / "scalar_galaxy.yaml")
    assert again.exit_code == 2 and "already exist" in again.stderr and "--force" in again.stderr
    assert mine.read_text() == "description: edited by hand\n"
    forced = import_openapi(tmp_path, FIXTURES / "scalar_galaxy.yaml", "--force")
    assert forced.exit_code == 0 and "getPlanet" in mine.read_text()


def test_server_and_tag_belong_to_openapi(tmp_path: Path) -> None:
    bad = import_openapi(tmp_path, FIXTURES / "petstore.yaml", "--server", "not a url")
    assert (
        bad.exit_code == 2 and "--server 'not a url' must be an absolute http(s) URL" in bad.stderr
    )
    other = cli("import", "mcp", str(FIXTURES / "petstore.yaml"), "--tag", "x", cwd=tmp_path)
    assert other.exit_code == 2 and "apply to `import openapi` only" in other.stderr


def test_what_the_import_writes_the_build_takes(tmp_path: Path) -> None:
    # Box tells operations on one path apart by a fragment (sent, it was TN441); a nullable
    # header parameter was TN442 ("it is null, string"); a recursive response: Gemini's
    # parameters cannot inline it, the other targets take it (TN416, never a traceback)
    node = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}},
    }
    ok = {
        "description": "ok",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}},
    }
    nullable = {"name": "X-Trace", "in": "header", "schema": {"type": "string", "nullable": True}}
    doc = document(
        components={"schemas": {"Node": node}},
        paths={
            "/files/{id}#add_shared_link": {
                "put": {
                    "parameters": [
                        {
                            "name": "id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        },
                        nullable,
                    ],
                    "responses": {"200": ok},
                }
            },
            "/files/{id}#get_shared_link": {
                "get": {
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {"200": ok},
                }
            },
        },
    )
    found = imported(tmp_path, doc)
    add = found["put_files_id_add_shared_link"]
    assert add["http"]["url"] == "/files/{id}" and add["profile"] == "reach"
    assert add["input_schema"]["properties"]["X-Trace"]["type"] == ["string", "null"]
    assert found["get_files_id_get_shared_link"]["http"]["url"] == "/files/{id}"
    project = tmp_path / "p"
    (project / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")  # default settings
    built = cli("build", "specs", "--out", "box_tools", cwd=project)
    assert built.exit_code == 0, built.stderr
    assert "error[" not in built.stderr
    files = {
        p.stem: json.loads(p.read_text())
        for p in (project / "box_tools" / "schemas").glob("*.json")
    }
    assert len(files["mcp"]) == 2 and len(files["anthropic"]) == 2


def test_a_deprecated_operation_and_parameter_are_marked(tmp_path: Path) -> None:
    document = tmp_path / "old.yaml"
    document.write_text(
        "openapi: 3.1.0\ninfo: {title: Old, version: '1'}\n"
        "servers: [{url: 'https://old.example.com'}]\npaths:\n"
        "  /things:\n    get:\n      operationId: listThings\n      deprecated: true\n"
        "      parameters:\n        - {name: page, in: query, deprecated: true, schema: {type: integer}}\n"
        "      responses:\n        '200':\n          description: ok\n"
        "          content: {application/json: {schema: {type: array, items: {type: string}}}}\n"
    )
    project = tmp_path / "project"
    assert import_openapi(project, document).exit_code == 0
    found = spec(project, "listThings")
    assert found["deprecated"] is True
    assert found["input_schema"]["properties"]["page"]["deprecated"] is True
    assert found["output_schema"]["properties"]["result"]["type"] == "array"
