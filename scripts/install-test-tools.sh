#!/usr/bin/env bash
# Installs, from Debian's packages, what the browser and exposition-format tests need when missing:
#   chromium + chromium-driver  the dashboards report test and the runner's live job page test
#                               (headless Chromium, driven by Selenium through chromedriver);
#   prometheus                  for promtool ("promtool check metrics" on the runner's /metrics).
# Needs root (or passwordless sudo) and apt. Exits 0 when all of them are (now) available.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "install-test-tools: not root and no passwordless sudo; cannot install ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# The prometheus package brings a server too; nothing starts it here (no init system runs in CI).
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
command -v chromium >/dev/null && command -v chromedriver >/dev/null && command -v promtool >/dev/null
