#!/usr/bin/env bash
# Install what the browser check needs, only when it is missing (idempotent, quiet when all is there):
#   * Debian's chromium (never Playwright's own browser download: `playwright install` is not used);
#   * playwright (the Python client) into the venv, from the project's `browser` extra.
# Usage: tests/browser/ensure_deps.sh [venv-python]      (default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${1:-.venv/bin/python}"

find_chromium() {
    command -v chromium || command -v chromium-browser || true
}

if [ -n "${CHROMIUM:-}" ] && [ ! -x "$CHROMIUM" ]; then
    echo "browser-test: CHROMIUM=$CHROMIUM is not an executable file" >&2
    exit 1
fi

if [ -z "${CHROMIUM:-}" ] && [ -z "$(find_chromium)" ]; then
    if [ "$(id -u)" = 0 ]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        echo "browser-test: chromium is missing and cannot be installed here (not root, no password-less sudo)." >&2
        echo "browser-test: install it yourself: sudo apt-get update && sudo apt-get install -y chromium" >&2
        echo "browser-test: or point CHROMIUM=/path/to/chromium at an existing Chromium/Chrome." >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "browser-test: chromium is missing and this is not a Debian/Ubuntu system (no apt-get);" >&2
        echo "browser-test: install Chromium and set CHROMIUM=/path/to/chromium." >&2
        exit 1
    fi
    echo "browser-test: installing Debian's chromium (apt-get update && apt-get install chromium) ..." >&2
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -q >/dev/null
    # fonts: without them the screenshots show boxes instead of text
    "${SUDO[@]}" apt-get install -y -q chromium fonts-dejavu-core fonts-liberation >/dev/null
    [ -n "$(find_chromium)" ] || { echo "browser-test: apt-get installed chromium but it is not on PATH" >&2; exit 1; }
fi

if ! "$PY" -c "import playwright.sync_api" 2>/dev/null; then
    echo "browser-test: installing playwright into the venv (pip install -e '.[browser]') ..." >&2
    "$PY" -m pip install -q -e '.[browser]'
fi
