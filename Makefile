# Task runner. `make run` = main job on the embedded runtime; `make test` = lint + tests.
# Both bootstrap what is missing (virtualenv, packages, Delta jars) and are safe to re-run.
VENV ?= .venv
BIN := $(VENV)/bin
export DBT_PROFILES_DIR ?= $(CURDIR)/profiles
export SPARK_CDC_HOME ?= $(CURDIR)/.spark_cdc
# make run and make test use the embedded runtime (one process, nothing left running);
# commands by hand default to the warm engine (profiles/profiles.yml).
export SPARK_CDC_TARGET ?= local
export PYTHONHASHSEED ?= 0

.PHONY: setup setup-browser run test test-fast test-compat test-conformance test-conformance-dbt-1.12 lint lint-sql lint-python pytest bench docs dist lock clean

setup:
	@bash scripts/bootstrap.sh

setup-browser:
	@bash scripts/install_browser.sh

run: setup
	@$(BIN)/python -m spark_cdc_dev.main_job $(RUN_ARGS)

test: setup lint pytest

lint: lint-python lint-sql

lint-python: setup
	$(BIN)/ruff check src python_tests conformance_tests benchmarks models scripts
	$(BIN)/ruff format --check src python_tests conformance_tests benchmarks models scripts

# --processes 0: one linting process per CPU (about half the wall time on two cores).
lint-sql: setup
	$(BIN)/sqlfluff lint --processes 0 models macros snapshots tests analyses \
		integration_tests/models src/dbt/include/sparkcdc/macros

test-fast: setup
	$(BIN)/python -m pytest -m unit -q

# dbt's adapter conformance suite (dbt-tests-adapter, conformance_tests/) on the sparkcdc session
# target: on the lock's dbt; test-conformance-dbt-1.12 on dbt-core 1.12.0 (.venv-dbt-1.12).
# Not part of make test: each takes about 10 minutes beside the suite's 50-minute budget.
CONFORMANCE := -m pytest -c conformance_tests/pytest.ini -n 2 --durations 10 conformance_tests
test-conformance: setup
	$(BIN)/python $(CONFORMANCE) --junitxml build/conformance-dbt-lock.xml

test-conformance-dbt-1.12:
	@bash scripts/dbt_112_venv.sh
	.venv-dbt-1.12/bin/python $(CONFORMANCE) --junitxml build/conformance-dbt-1.12.xml

pytest: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations 40 \
		-m "not compat" --junitxml build/test-results.xml

# What CI leaves to a run before each release (and after a change to the adapter, the macros or
# the dependency ranges): the consumer walk at the lowest versions, and the conformance tier on
# dbt-core 1.12.0. Record each run in benchmarks/results/suite_runs.json.
test-compat: setup test-conformance-dbt-1.12
	$(BIN)/python -m pytest -n 2 -m compat --junitxml build/test-compat.xml

bench: setup
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_snapshot.py
	SPARK_CDC_DRIVER_MEMORY=8g $(BIN)/python benchmarks/bench_hash_cdc.py
	SPARK_CDC_DRIVER_MEMORY=8g $(BIN)/python benchmarks/bench_change_events.py
	SPARK_CDC_DRIVER_MEMORY=8g $(BIN)/python benchmarks/bench_schema_drift.py
	SPARK_CDC_DRIVER_MEMORY=8g $(BIN)/python benchmarks/bench_schema_drift_stream.py --warm-up-minutes 1 --no-type-conflicts
	SPARK_CDC_DRIVER_MEMORY=8g $(BIN)/python benchmarks/bench_schema_drift_stream.py --warm-up-minutes 1
	$(BIN)/python benchmarks/bench_delta_commit_floor.py --tables 300 --writers 4

docs: setup
	$(BIN)/dbt docs generate

# The wheel and sdist a team installs (dist/spark_cdc-<version>-py3-none-any.whl), built with the
# virtualenv's own setuptools (after make setup).
dist:
	$(BIN)/python -m build --no-isolation --outdir dist .

# Re-resolve pyproject.toml's ranges into constraints/lock.txt (what setup installs).
lock:
	@bash scripts/lock.sh

clean:
	rm -rf target dbt_packages logs .spark_cdc dist
