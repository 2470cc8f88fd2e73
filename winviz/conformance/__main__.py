"""``python -m winviz.conformance run FILE_OR_DIR... [--json]``."""

from winviz.conformance.cli import main

raise SystemExit(main())
