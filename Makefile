# The two commands a new user runs (see README): `make demo` and `make test`.
# Each one creates .venv and installs referee into it when needed.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PYTENSOR_FLAGS ?= base_compiledir=$(CURDIR)/.cache/pytensor
export MPLBACKEND := Agg

.PHONY: demo test test-all install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,fast]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/referee demo --out reports/demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

# every test including the unbounded heavy validation (slow marker)
test-all: $(STAMP)
	REFEREE_FULL=1 $(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .cache reports/demo
