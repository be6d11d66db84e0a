#!/usr/bin/env bash
# MariaDB from Debian's packages, for the real-connector Debezium tests (a no-op when it is
# there; the tests start their own servers on loopback and stop them).
set -euo pipefail
if [ -x /usr/sbin/mariadbd ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install_mariadb: not root; install it yourself: apt-get install mariadb-server" >&2
  exit 1
fi
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null
