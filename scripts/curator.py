"""A design's curator asked again about what a run recorded, by today's code; nothing is
stored in the run. Three tools (reflexion.curate.curator_replay, curator_parse):

- `ask`: each chosen task's recorded attempts put to the curator of `--kind`, each new reply
  printed beside what the run stored then;
- `replay`: every curator request of an `insights` run rebuilt and asked again, and the
  replies the board takes in full counted, the run's and the new ones;
- `parse`: how often a reply can be used, free text (`--curation text`) against JSON, on a
  run's final attempts.

    .venv/bin/python scripts/curator.py ask runs/sql-bank --env sql --strategy bank \\
        --kind item --tasks sql/055,sql/005,sql/020
    .venv/bin/python scripts/curator.py replay runs/sql-05-by15 --env sql --limit 16
    .venv/bin/python scripts/curator.py parse RUN --limit 10 --out runs/curator-parse.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from reflexion import ReflexionError
from reflexion.curate import CURATED_KINDS, ask_curator, curator_parse_rates, replay_curator
from reflexion.models import DEFAULT_MODEL

RUN_HELP = "a run folder whose trace has the attempts"


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    tools = parser.add_subparsers(dest="tool", required=True)
    one = tools.add_parser("ask", help="a curator asked again about a run's attempts")
    one.add_argument("run", type=Path, help=RUN_HELP)
    one.add_argument("--env", required=True, help="the env spec the run used")
    one.add_argument("--strategy", required=True, help="whose attempts (a strategy's name)")
    one.add_argument("--kind", choices=sorted(CURATED_KINDS), default="item")
    one.add_argument("--tasks", default="", help="task ids, comma-separated (default: 3)")
    one.add_argument("--seed", type=int, default=0, help="whose attempts, of a run's seeds")
    one.add_argument("--show-prompt", action="store_true", help="print each request too")
    every = "every recorded attempt, as bank-scaled asks"
    one.add_argument("--all-attempts", action="store_true", help=every)
    one.add_argument("--model", default=DEFAULT_MODEL, help="the curator's model")
    again = tools.add_parser("replay", help="insights' recorded curator requests asked again")
    again.add_argument("run", type=Path, help="a run folder with insights' curator requests")
    again.add_argument("--env", required=True, help="the env spec the run used")
    again.add_argument("--strategy", default="insights")
    again.add_argument("--limit", type=int, default=30, help="requests, evenly spaced (0: all)")
    again.add_argument("--model", default="", help="default: the run's curator (config.json)")
    again.add_argument("--embedder", default="", help="default: the run's (config.json)")
    rate = tools.add_parser("parse", help="replies used, free text against JSON")
    rate.add_argument("run", type=Path, help=RUN_HELP)
    rate.add_argument("--limit", type=int, default=10, help="the first N final attempts")
    rate.add_argument("--model", default=DEFAULT_MODEL)
    rate.add_argument("--out", type=Path, default=Path("runs/curator-parse.jsonl"))
    return parser.parse_args(argv)


def main() -> int:
    args = arguments()
    tools = {"ask": ask_curator, "replay": replay_curator, "parse": curator_parse_rates}
    tool = tools[args.tool]
    try:
        return asyncio.run(tool(args))
    except (ReflexionError, OSError, ValueError, KeyError) as exc:  # a bad spec, a torn trace
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
