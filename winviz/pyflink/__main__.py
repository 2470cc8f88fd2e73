"""``python -m winviz.pyflink JOB.py [ARGS]`` (see ``winviz.pyflink.runner``)."""

import sys

from winviz.pyflink.runner import main

sys.exit(main())
