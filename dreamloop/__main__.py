"""``python -m dreamloop``: the ``dreamloop`` command (``dreamloop compare`` runs its dreamloop side so)."""

import sys

from dreamloop.cli import main

sys.exit(main())
