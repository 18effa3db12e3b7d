# Two commands do all the set-up: `make demo` opens the console, `make test` runs the tests.
# Both create .venv and install Warden into it on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CONTRACT := $(wildcard ../shared/contract)

.PHONY: demo test lint bench install

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/warden

test: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -c pyproject.toml --rootdir . tests $(CONTRACT)

bench: $(VENV)/.installed
	$(PY) bench/approval_cycle.py
	$(PY) bench/list_suspended.py
