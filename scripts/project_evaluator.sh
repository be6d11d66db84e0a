#!/usr/bin/env bash
# dbt-project-evaluator on spark_cdc (docs_check/): installs the packages, builds the evaluator's
# models and its exceptions seed on the embedded runtime, and fails on any finding left.
#   scripts/project_evaluator.sh                       packages from dbt's hub (dbt deps)
#   scripts/project_evaluator.sh --packages-dir DIR    DIR/dbt_project_evaluator and DIR/dbt_utils:
#                                                      local copies, for a machine without the hub
# Runs in a copy under a fresh home ($SPARK_CDC_HOME is not touched); prints the findings.
set -euo pipefail
cd "$(dirname "$0")/.."
project=$PWD
packages_dir=""
if [ "${1:-}" = "--packages-dir" ]; then
  packages_dir=$(cd "$2" && pwd)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r docs_check "$work/docs_check"
if [ -n "$packages_dir" ]; then
  # The evaluator's own packages.yml names dbt_utils on the hub: use the local copy instead.
  mkdir -p "$work/packages"
  cp -r "$packages_dir/dbt_project_evaluator" "$packages_dir/dbt_utils" "$work/packages/"
  rm -f "$work/packages/dbt_project_evaluator/packages.yml"
  printf 'packages:\n  - local: %s\n  - local: %s\n  - local: %s\n' "$project" \
    "$work/packages/dbt_project_evaluator" "$work/packages/dbt_utils" >"$work/docs_check/packages.yml"
else
  sed -i "s|local: \.\./|local: $project|" "$work/docs_check/packages.yml"
fi

export SPARK_CDC_HOME="$work/home" DBT_PROFILES_DIR="$project/profiles" SPARK_CDC_TARGET=local
export DBT_PROJECT_EVALUATOR_SEVERITY=error
dbt="$project/.venv/bin/dbt"
cd "$work/docs_check"
"$dbt" deps --quiet
"$dbt" build --select package:dbt_project_evaluator dbt_project_evaluator_exceptions
