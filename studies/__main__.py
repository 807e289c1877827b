"""``python -m studies [--quick] --out DIR``: every study, then the report."""

from studies.run_all import main

raise SystemExit(main())
