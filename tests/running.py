"""`reflexion.run` as the tests call it: without the report, since plotting takes a second or
two a run, and these tests look at the results and the run folder only."""

from __future__ import annotations

import functools

from reflexion import RunConfig
from reflexion import run as run_with_report

run = functools.partial(run_with_report, report=False)

__all__ = ["RunConfig", "run"]
