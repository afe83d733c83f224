# Set-up and the two jobs of the README. Needs only Python >= 3.11 with pip (and make).
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin

.PHONY: setup bytecode run test lint typecheck docs clean

setup: $(VENV)/.installed

# the library's bytecode cached as pip writes it for an installed package: an editable checkout under
# PYTHONDONTWRITEBYTECODE=1 would compile its modules again in every process (0.1 s of each start;
# docs/notes/bench-scale-history.md); an up-to-date module is skipped
bytecode: setup
	$(BIN)/python -m compileall -q tpm_models

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[solvers,test,docs]"
	touch $@

# the main job: every tie between the formulations on Iris and Wine, then Table 3 (5 runs;
# `$(BIN)/tpm-models reproduce --runs 100` for the paper's full protocol); output in runs/reproduce/
run: bytecode
	$(BIN)/tpm-models reproduce --dataset iris wine

# the whole test suite (and the linter and the type checker), in one worker process per core, at most 4 (pytest-xdist; a worker idle
# takes tests from a busy one): 20 min in one process on the project's 2-core machine, 12.5 min in two
# (docs/architecture.md); `$(BIN)/python -m pytest` alone runs it in this process
test: bytecode
	$(BIN)/ruff check tpm_models tests benchmarks
	$(BIN)/python -m mypy tpm_models
	$(BIN)/python -m pytest -q -ra -n auto --maxprocesses 4 --dist worksteal

lint: setup
	$(BIN)/ruff check tpm_models tests benchmarks

# mypy at the strictness of pyproject.toml's [tool.mypy], on the whole package (make test runs it too)
typecheck: setup
	$(BIN)/python -m mypy tpm_models

# the documentation site (mkdocs.yml), warnings are errors; output in site/
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache site
