#!/usr/bin/env bash
# The headless browser of the docs-site test (python_tests/test_dbt_in_process.py): Debian's
# chromium, installed when missing and the machine allows it (root or password-less sudo with
# apt-get); otherwise says how, and the test names what is missing. Safe to re-run.
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
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "install_browser: no Chromium found; run: sudo apt-get install chromium" >&2
  exit 0
fi

echo "install_browser: installing Debian's chromium (headless browser of the docs-site test)"
export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get install -y -qq chromium >/dev/null; then
  "${as_root[@]}" apt-get update -qq >/dev/null
  "${as_root[@]}" apt-get install -y -qq chromium >/dev/null
fi
