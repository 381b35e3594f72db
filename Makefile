# The two set-up commands a newcomer needs: `make run` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test lint bench clean

# editable_mode=compat puts the checkout on sys.path through a plain .pth line: no import hook,
# which keeps the agent hook's start-up as cheap as an ordinary install.
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[dev]' --config-settings editable_mode=compat
	touch $(STAMP)

# checkov, the infrastructure linter tests/test_deploy_checks.py runs over the manifests and the Dockerfile,
# in a venv of its own: it pins packaging<24, pytest needs >=24. Without it those rows are skipped.
CHECKOV := checkov==3.3.30
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed-stamp

$(CHECKOV_STAMP): Makefile
	$(PY) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install -q '$(CHECKOV)' && touch $(CHECKOV_STAMP) \
		|| echo "make: checkov did not install; tests/test_deploy_checks.py skips its rows" >&2

install: $(STAMP) $(CHECKOV_STAMP)

run: $(STAMP)
	$(BIN)/merge-hold dev

test: $(STAMP) $(CHECKOV_STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy core foundation state app workers hook merge_hold tests bench

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) .merge-hold build *.egg-info
