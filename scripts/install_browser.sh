#!/usr/bin/env bash
# Install what the status page's browser tests (tests/web/test_browser.py) drive:
# Debian's Chromium and its matching chromedriver, at /usr/bin/chromium and
# /usr/bin/chromedriver. Nothing else is downloaded: Selenium (the `test`
# extra in setup.cfg) is pointed at these two, so Selenium Manager never runs.
# Does nothing when both are there already. Needs root (or sudo) and apt-get.
set -euo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "chromium and chromedriver already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_browser.sh: apt-get not found; install chromium and chromedriver by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null

/usr/bin/chromedriver --version
