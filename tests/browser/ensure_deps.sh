#!/usr/bin/env bash
# Install what the browser check needs, only when it is missing (idempotent, quiet when all is there):
#   * Debian's chromium (never Playwright's own browser download: `playwright install` is not used);
#   * the fonts the pages need: a CJK font (the Chinese edition) and a colour emoji font (the ✅/❌ marks),
#     Debian's fonts-noto-cjk and fonts-noto-color-emoji, when fontconfig finds neither kind;
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

can_apt() {  # sets SUDO; false when packages cannot be installed here
    if [ "$(id -u)" = 0 ]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        return 1
    fi
    command -v apt-get >/dev/null 2>&1
}

APT_UPDATED=""
apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    if [ -z "$APT_UPDATED" ]; then
        "${SUDO[@]}" apt-get update -q >/dev/null
        APT_UPDATED=1
    fi
    "${SUDO[@]}" apt-get install -y -q "$@" >/dev/null
}

if [ -z "${CHROMIUM:-}" ] && [ -z "$(find_chromium)" ]; then
    if ! can_apt; then
        echo "browser-test: chromium is missing and cannot be installed here (not root and no password-less sudo," >&2
        echo "browser-test: or not a Debian/Ubuntu system). Install it yourself (sudo apt-get install chromium)," >&2
        echo "browser-test: or point CHROMIUM=/path/to/chromium at an existing Chromium/Chrome." >&2
        exit 1
    fi
    echo "browser-test: installing Debian's chromium (apt-get update && apt-get install chromium) ..." >&2
    # fonts: without them the screenshots show boxes instead of text
    apt_install chromium fonts-dejavu-core fonts-liberation
    [ -n "$(find_chromium)" ] || { echo "browser-test: apt-get installed chromium but it is not on PATH" >&2; exit 1; }
fi

# CJK text and the ✅/❌ marks: fontconfig must know a font for each, or Chromium draws empty boxes
FONTS=()
if ! command -v fc-list >/dev/null 2>&1 || [ -z "$(fc-list :lang=zh family 2>/dev/null)" ]; then
    FONTS+=(fonts-noto-cjk)
fi
if ! command -v fc-list >/dev/null 2>&1 || [ -z "$(fc-list ':charset=2705' family 2>/dev/null)" ]; then
    FONTS+=(fonts-noto-color-emoji)
fi
if [ "${#FONTS[@]}" -gt 0 ]; then
    if can_apt; then
        echo "browser-test: installing fonts for CJK text and ✅/❌ (apt-get install ${FONTS[*]}) ..." >&2
        apt_install fontconfig "${FONTS[@]}"
    else
        echo "browser-test: no font for ${FONTS[*]/#fonts-noto-/} here, and none can be installed: the Chinese chapters'" >&2
        echo "browser-test: font check will fail. Install them yourself: sudo apt-get install ${FONTS[*]}" >&2
    fi
fi

if ! "$PY" -c "import playwright.sync_api" 2>/dev/null; then
    echo "browser-test: installing playwright into the venv (pip install -e '.[browser]') ..." >&2
    "$PY" -m pip install -q -e '.[browser]'
fi
