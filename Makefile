# dreamloop: every target bootstraps its own .venv (idempotent; re-installs when pyproject.toml changes).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Notebook runs: prompts answer themselves, rich output is plain and stable.
NB_ENV := DREAMLOOP_AUTO_ANSWER=1 NO_COLOR=1 JUPYTER_COLUMNS=100 PYDEVD_DISABLE_FILE_VALIDATION=1
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=120

.PHONY: help venv demo test unit nbval lab notebooks images bench soak browser-test screenshots clean

help:
	@echo "make demo          run the main job offline (change value to 2 on a sample project)"
	@echo "make test          the whole test suite: unit tests and every notebook (nbval)"
	@echo "make lab           JupyterLab on the notebooks"
	@echo "make notebooks     re-execute and save every notebook"
	@echo "make images        rebuild the figures in images/ from their sources"
	@echo "make bench         print the benchmarks' figures"
	@echo "make soak          10,000 generated sessions under faults, violations counted per invariant"
	@echo "make browser-test  the chapters in JupyterLab in headless Chromium (installs chromium, playwright if missing)"
	@echo "make screenshots   browser-test, then copy its screenshots into images/ (the README uses them)"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[lab,test]'
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/dreamloop demo

test: $(STAMP)
	$(NB_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadfile tests $(if $(wildcard notebooks/*.ipynb),$(NBVAL) notebooks,)

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests

nbval: $(STAMP)
	$(NB_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadfile $(NBVAL) notebooks

lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks/00_setup_and_tour.ipynb $(if $(filter 0,$(shell id -u)),--allow-root,)

notebooks: $(STAMP)
	$(NB_ENV) $(BIN)/python notebooks/build.py

images: $(STAMP)
	$(BIN)/python images/build.py

bench: $(STAMP)
	$(BIN)/python bench/wire.py
	$(BIN)/python bench/loop_overhead.py
	$(BIN)/python bench/inspector.py
	$(BIN)/python bench/hooks.py
	$(BIN)/python bench/transcript.py
	$(BIN)/python bench/streaming_tools.py

soak: $(STAMP)
	$(BIN)/python bench/soak.py

# The chapters as a learner sees them: JupyterLab in headless Chromium, checked (tests/browser/check_lab.py,
# one module per chapter in tests/browser/chapters/).
# Installs Debian's chromium (apt-get) and playwright (into the venv) when missing; screenshots in build/browser/.
browser-test: $(STAMP)
	bash tests/browser/ensure_deps.sh $(BIN)/python
	$(BIN)/python tests/browser/check_lab.py

# The README's screenshots, from a passing browser-test.
screenshots: browser-test
	cp build/browser/state-inspector.png build/browser/live-view.png images/
	cp build/browser/timelines.png images/streaming-timelines.png

clean:
	rm -rf $(VENV) build .pytest_cache
