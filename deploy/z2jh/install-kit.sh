#!/bin/sh
# The single-user image's Python environment, into the environment of PYTHON (the image's python; `make
# image-check`'s fresh venv): every package at its pin (requirements.txt), then the kit from this checkout, not
# editable and without re-resolving, then pip's check that the pins satisfy the kit's own requirements.
#   sh deploy/z2jh/install-kit.sh PYTHON
set -eu
python="${1:?usage: install-kit.sh PYTHON}"
here="$(cd "$(dirname "$0")" && pwd)"
"$python" -m pip install --no-cache-dir --quiet --requirement "$here/requirements.txt"
"$python" -m pip install --no-cache-dir --quiet --no-deps "$here/../.."
"$python" -m pip check
