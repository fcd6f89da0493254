# Cobalt: `make run` (set-up, then the debugging loop on the embedded model) and
# `make test` (set-up, then the whole test suite). Every step skips what is already done.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
COBALT := $(VENV)/bin/cobalt
STAMP := $(VENV)/.cobalt-installed
RUN_PROBLEM ?= examples/problems/is-prime.yaml
ADAPTER ?=
RUN_ENV := $(if $(ADAPTER),COBALT__MODEL__ADAPTER=$(ADAPTER))

.PHONY: run test lint setup-test setup-run venv docker image engine models-test models-run clean-data

# In a terminal: the TUI on an example problem; without one (CI, pipes): the headless loop, on the
# embedded model (model.name: qwen-coder-1.5b, served by llama.cpp on CPU and vLLM on GPU).
# The shipped adapter (examples/adapters/) is served merged when it passed the gate against the
# base; `make run ADAPTER=base` serves the bare model.
run: setup-run
	@if [ -t 0 ] && [ -t 1 ]; then $(RUN_ENV) $(COBALT) tui $(RUN_PROBLEM); \
	else $(RUN_ENV) $(COBALT) solve $(RUN_PROBLEM); fi

test: setup-test lint
	$(PY) -m pytest -q -p no:cacheprovider --durations=15

# ruff (pyproject.toml [tool.ruff]): lint, import order and the formatter's check, line length 120.
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

setup-test: venv docker image engine models-test
setup-run: venv docker image engine models-run

venv: $(STAMP)
$(STAMP): pyproject.toml constraints-cpu.txt scripts/setup-venv.sh
	bash scripts/setup-venv.sh
	touch $@

docker:
	@bash scripts/ensure-docker.sh

image: venv docker
	$(COBALT) sandbox build

# llama.cpp's server and llama-bench, built for this CPU from the pinned llama-cpp-python sdist (cached).
engine: venv
	@bash scripts/ensure-build-tools.sh
	$(COBALT) engine build

models-test: venv
	$(COBALT) models prepare tiny smollm2

models-run: venv
	$(COBALT) models prepare qwen-coder-1.5b
