#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium for the dashboards browser test, if it is missing.
# Needs root (or passwordless sudo) and apt. Exits 0 when chromium is (now) available.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "install-chromium: not root and no passwordless sudo; cannot install chromium" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null
