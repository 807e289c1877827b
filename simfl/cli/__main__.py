"""``python -m simfl.cli``: the ``simfl`` command, as ``python -m simfl`` runs it."""

import sys

from simfl.cli import main

sys.exit(main())
