#!/usr/bin/env bash
# The project's environment with dbt-core 1.12.0 instead of the lock's dbt (for the conformance
# tier on dbt 1.12: make test-conformance): the locked packages (bootstrap.sh into .venv-dbt-1.12),
# then dbt-core 1.12.0 and the parser it installs with from a wheel (dbt-core-experimental-parser
# 2.0.0a4; 1.12.1 and later need 2.0.0b1+, which downloads a binary when it installs), what else
# pip resolves around them. Idempotent: a no-op when dbt 1.12.0 is there.
set -euo pipefail
cd "$(dirname "$0")/.."
export SPARK_CDC_VENV=.venv-dbt-1.12
bash scripts/bootstrap.sh >/dev/null
if [ "$("$SPARK_CDC_VENV/bin/python" -c 'from importlib.metadata import version; print(version("dbt-core"))')" != "1.12.0" ]; then
  echo "dbt_112_venv: installing dbt-core 1.12.0 into $SPARK_CDC_VENV"
  "$SPARK_CDC_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "dbt-core==1.12.0" "dbt-core-experimental-parser==2.0.0a4"
fi
echo "dbt_112_venv: ready ($("$SPARK_CDC_VENV/bin/dbt" --version | head -n 2 | tail -n 1 | tr -s ' '))"
