#!/usr/bin/env bash
# Set up what is missing, idempotently: virtualenv, locked packages, the JVM jars.
# Re-installs the packages only when pyproject.toml or the package sources changed.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${SPARK_CDC_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

if ! command -v java >/dev/null 2>&1; then
  echo "bootstrap: Java 17+ is required (Spark runs on the JVM): apt-get install openjdk-17-jre-headless" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating virtualenv $VENV"
  "$PYTHON" -m venv "$VENV"
fi

stamp="$VENV/.spark_cdc-installed"
newest_source=$(find pyproject.toml constraints src -type f -newer "$stamp" 2>/dev/null | head -n 1 || true)
if [ ! -f "$stamp" ] || [ -n "$newest_source" ]; then
  echo "bootstrap: installing the locked packages (constraints/lock.txt) into $VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "pip==26.3" "setuptools==84.2.1" "wheel==0.45.1"
  # compat editable mode keeps the dbt.adapters.* namespace visible (pkgutil-style namespace).
  # (PYTHONWARNINGS: setuptools warns on every install that compat mode is transitional.)
  PYTHONWARNINGS=ignore "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --config-settings editable_mode=compat -c constraints/lock.txt -e ".[dev]"
  touch "$stamp"
fi

# Delta Lake's and Spark's Kafka connector's jars from Maven Central (cached in ~/.m2 and
# ~/.cache/spark_cdc; no-op when present).
"$VENV/bin/python" -m spark_cdc.session.jars >/dev/null
# The JVM class archive every embedded Spark process maps to start faster (built once, about a
# minute; a no-op when present; Spark works without it).
"$VENV/bin/python" -m spark_cdc.engine.class_archive_build >/dev/null ||
  echo "bootstrap: warning: the JVM class archive was not built (Spark works without it)" >&2
echo "bootstrap: ready ($("$VENV/bin/python" -c 'import pyspark, delta; print("pyspark", pyspark.__version__)'))"
