#!/usr/bin/env bash
# Re-resolve pyproject.toml's ranges (with every extra) in a fresh virtualenv and write the result
# to constraints/lock.txt, the versions make setup and CI install. Run after changing a range.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$PYTHON" -m venv "$scratch/venv"
"$scratch/venv/bin/python" -m pip install --quiet --disable-pip-version-check ".[dev]"
{
  echo "# The project's own lock: every package make setup and CI install, at one version each (make lock"
  echo "# re-resolves pyproject.toml's ranges in a fresh virtualenv and rewrites it)."
  "$scratch/venv/bin/python" -m pip freeze --exclude spark-cdc
} > constraints/lock.txt
echo "lock: constraints/lock.txt ($(grep -vc '^#' constraints/lock.txt) packages)"
