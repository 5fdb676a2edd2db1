"""`reflexion transfer`: learn on part A of an env's tasks, then run part B with the learned memory
and with an empty one, both frozen (reflexion.runner.transfer; `reflexion transfer --help`)."""

import sys

from reflexion import cli

if __name__ == "__main__":
    sys.exit(cli.main(["transfer", *sys.argv[1:]]))
