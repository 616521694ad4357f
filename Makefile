# The two commands a new user runs (see README): `make demo` and `make test`.
# Each one creates .venv and installs exactly the committed lock (requirements/lock.txt, with hashes) into it,
# then referee itself without dependencies. `make lock` re-resolves the lock on purpose.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EDITABLE := $(VENV)/.editable
LOCK := requirements/lock.txt
BOOTSTRAP := requirements/bootstrap.txt
# the extras resolved into the lock: tests, nutpie, the benchmarks' peers, the runners the tests play, the manual
EXTRAS := --extra test --extra fast --extra bench --extra runners --extra docs
export PYTENSOR_FLAGS ?= base_compiledir=$(CURDIR)/.cache/pytensor
# numba's on-disk cache (nutpie, PyTensor's numba backend) in one writable folder every process shares
export NUMBA_CACHE_DIR ?= $(CURDIR)/.cache/numba
export MPLBACKEND := Agg
# runners that cannot share referee's environment (they pin pandas<3 and openai<3): each is played in a venv
# of its own from its own hash lock (requirements/runners/NAME.txt), as a researcher runs a runner apart and
# hands referee its logs; tests/test_runners.py plays their real games there
RUNNER_ENVS := kaggle clem inspect
RUNNER_STAMPS := $(RUNNER_ENVS:%=.cache/runners/%/.installed)
# pytest workers: both cores of the reference machine (CI: 2 cores)
JOBS ?= 2

.PHONY: demo test test-seeds test-all install runners browser lock clean docs

# a changed lock rebuilds the venv from nothing, so that it holds the lock and nothing else
$(STAMP): $(LOCK) $(BOOTSTRAP) pyproject.toml
	@echo "setting up .venv from requirements/lock.txt (the first run only: about a minute on a fresh machine)"
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r $(BOOTSTRAP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --require-hashes --no-deps --compile-bytecode -r $(LOCK)
	$(BIN)/uv pip check --python $(BIN)/python
	touch $(STAMP)

# referee itself, editable as a tree of links (build/__editable__.*/referee/...) on sys.path: the folders keep
# the design card's names (analysis/ is `referee`, models/ `referee.models`, data/ `referee.shipped`), and
# editors, type checkers and debuggers follow `referee.*` through the links to the source files (the default
# editable mode maps the names by an import hook that static tools cannot read). A file added or removed in a
# source folder changes the folder, which refreshes the links. Its modules are compiled to bytecode here, as the
# lock's packages are (--compile-bytecode): where PYTHONDONTWRITEBYTECODE is set, every process (the tests start
# hundreds) would otherwise compile referee's 250 modules again; a source edited later is compiled afresh.
SOURCE_DIRS := $(shell find analysis models data -type d -not -name __pycache__ 2>/dev/null)
$(EDITABLE): $(STAMP) $(SOURCE_DIRS)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --no-build-isolation -e . \
		--config-settings editable_mode=strict
	$(BIN)/python -m compileall -q -j 0 build/__editable__.*/referee
	touch $(EDITABLE)

install: $(EDITABLE)

.cache/runners/%/.installed: requirements/runners/%.txt $(STAMP)
	rm -rf .cache/runners/$*
	$(BIN)/uv venv --quiet --python $(PYTHON) .cache/runners/$*
	$(BIN)/uv pip install --quiet --python .cache/runners/$*/bin/python --require-hashes --no-deps -r $<
	touch $@

runners: $(RUNNER_STAMPS)

demo: $(EDITABLE)
	$(BIN)/referee demo --out reports/demo

# the manual: a Sphinx site in docs/_build/html (warnings are errors; the notebooks executed with few draws, cached)
docs: $(EDITABLE)
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	@echo "the manual: docs/_build/html/index.html"

# headless Chromium for the report's browser check (tests/test_browser.py): Debian's chromium and
# chromium-driver, installed when missing (as root, where apt-get exists; otherwise the check fails and says so)
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing chromium and chromium-driver for the browser check"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "warning: chromium and chromium-driver are missing: tests/test_browser.py will fail"; fi; fi

# every test at its own seed; the seed sweep (test-seeds) and the heavy calibrations (test-all) apart, so that
# the suite stays under 20 minutes on 2 cores of any CPU (issue 65); workers steal the queue's tail from each other, so a
# long test near the end does not leave one core idle (issue 81)
test: $(EDITABLE) runners browser
	$(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal -m "not heavy"

# the seed sweep (issue 53): every Bayesian test under its own seed and 9 more, 1 or 2 BLAS threads in turn
test-seeds: $(EDITABLE)
	$(BIN)/python -m pytest -q -n $(JOBS) --seeds 9 -m "bayes"

# every test including the unbounded heavy validation (slow marker)
test-all: $(EDITABLE) runners browser
	REFEREE_FULL=1 $(BIN)/python -m pytest -q -n $(JOBS)

# re-resolve the lock for Python 3.11 on Linux x86_64 (run on purpose, then commit requirements/)
lock:
	$(PYTHON) -m venv .cache/lock-venv
	.cache/lock-venv/bin/python -m pip install --quiet --require-hashes --no-deps -r $(BOOTSTRAP)
	.cache/lock-venv/bin/uv pip compile pyproject.toml $(EXTRAS) --generate-hashes --python-version 3.11 \
		--python-platform x86_64-manylinux_2_28 --output-file $(LOCK)
	# the pyproject.toml this lock was resolved from: any edit to it without `make lock` fails the tests
	echo "# resolved from pyproject.toml sha256 $$(sha256sum pyproject.toml | cut -d' ' -f1)" >> $(LOCK)
	for r in $(RUNNER_ENVS); do \
	  .cache/lock-venv/bin/uv pip compile requirements/runners/$$r.in --generate-hashes --python-version 3.11 \
	    --python-platform x86_64-manylinux_2_28 --quiet --output-file requirements/runners/$$r.txt && \
	  echo "# resolved from requirements/runners/$$r.in sha256 $$(sha256sum requirements/runners/$$r.in | cut -d' ' -f1)" \
	    >> requirements/runners/$$r.txt; done

clean:
	rm -rf $(VENV) .cache build reports/demo
