#!/usr/bin/env bash
# The headless browser of the docs-site test (python_tests/test_dbt_in_process.py): Debian's
# chromium, installed when missing and run as root with apt-get (CI, `make setup-browser` as
# root); otherwise says how, and the browser tier is reported as not run. Safe to re-run.
set -euo pipefail

for browser in "${SPARK_CDC_CHROMIUM:-}" chromium chromium-browser google-chrome; do
  if [ -n "$browser" ] && command -v "$browser" >/dev/null 2>&1; then
    exit 0
  fi
done

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_browser: no Chromium found; install one (or set SPARK_CDC_CHROMIUM) for the docs-site test" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install_browser: no Chromium found; run as root: apt-get install chromium" >&2
  exit 0
fi

echo "install_browser: installing Debian's chromium (headless browser of the docs-site test)"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq chromium >/dev/null; then
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
fi
