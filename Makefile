# Two commands do all the set-up: `make demo` opens the console, `make test` runs the tests.
# Both create .venv and install Warden into it on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CONTRACT := $(wildcard ../shared/contract)

JS_DIR := tests/server/js
STUDIO_JS_DIR := tests/server/studio/js
TYPED := agent_core storage warden_types warden_server warden_client warden_mcp tui warden_cli warden_demo

.PHONY: demo test lint bench install js studio-js nginx chromium

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

# The demo agents, and one agent of each other framework (pydantic-ai, OpenAI Agents, LangGraph) beside them.
demo: $(VENV)/.installed
	WARDEN_DEMO_FRAMEWORKS=1 $(VENV)/bin/warden

# The Mastra client-js interoperability test needs its npm packages (needs Node.js and npm).
js:
	@if [ -f $(JS_DIR)/package.json ] && [ ! -d $(JS_DIR)/node_modules/@mastra ]; then \
		if command -v npm >/dev/null; then (cd $(JS_DIR) && npm ci --no-audit --no-fund --loglevel=error); \
		else echo "npm not found: the client-js test will be skipped (it fails in CI)"; fi; \
	fi

# The Mastra Studio browser test serves Studio from the npm package `mastra` (needs Node.js and npm).
studio-js:
	@if [ -f $(STUDIO_JS_DIR)/package.json ] && [ ! -x $(STUDIO_JS_DIR)/node_modules/.bin/mastra ]; then \
		if command -v npm >/dev/null; then (cd $(STUDIO_JS_DIR) && npm ci --no-audit --no-fund --loglevel=error); \
		else echo "npm not found: the Studio browser test will be skipped (it fails in CI)"; fi; \
	fi

# Browser tests drive Debian's Chromium with Playwright (browsers cannot be downloaded here).
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO="sudo"; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends chromium; \
	fi

# Format check, ruff, the type checker and the import contracts.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy $(TYPED)
	$(VENV)/bin/lint-imports

# The multi-instance test puts two servers behind nginx on loopback (it fails, never skips, without it).
nginx:
	@if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then \
		SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO="sudo"; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends nginx-light; \
	fi

# Lint first (fast, and a type error fails before the ~3 min suite), then every test.
test: lint js studio-js nginx chromium
	$(PY) -m pytest -c pyproject.toml --rootdir . tests $(CONTRACT)

bench: $(VENV)/.installed
	$(PY) bench/approval_cycle.py
	$(PY) bench/list_suspended.py
