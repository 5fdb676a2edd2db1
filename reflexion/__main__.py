"""`python -m reflexion ...` runs the `reflexion` command."""

import sys

from reflexion.cli.main import main

sys.exit(main())
