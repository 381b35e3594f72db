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

install: $(STAMP)

run: $(STAMP)
	$(BIN)/merge-hold dev

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy core state app workers hook merge_hold tests bench

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .merge-hold build *.egg-info
