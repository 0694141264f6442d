#!/usr/bin/env bash
# Install what the status page's browser tests (tests/web/test_browser.py) drive:
# Debian's Chromium and its matching chromedriver, at /usr/bin/chromium and
# /usr/bin/chromedriver. Nothing else is downloaded: Selenium (the `test`
# extra in pyproject.toml) is pointed at these two, so Selenium Manager never runs.
# Does nothing when both are there already. Needs root (or password-less sudo)
# and apt-get; never prompts (sudo -n). Without them, run `dev.py test --no-browser`.
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
    if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
        echo "install_browser.sh: needs root or password-less sudo; skip the browser tests with" \
             "INDEXNOW_SKIP_BROWSER=1 (or dev.py test --no-browser)" >&2
        exit 1
    fi
    SUDO="sudo -n"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null

/usr/bin/chromedriver --version
