"""Curating what a run learned: the shared code under `reflexion memory` and the web memory
page. It reaches every store through the Curated contract (reflexion.core.curation) that each
memory backend offers, and knows no concrete store.

    stores   where a run folder's stores are, opened for reading or for changing (with a lock)
    lessons  finding a lesson or a task among them as a person names it, searching by text
    recalls  the recalls a run's trace recorded: of a lesson, and those an attempt saw
    audit    rerunning a recalling episode without a lesson: what that lesson did
    curator_replay, curator_parse  a design's curator asked again about what a run recorded
             (`scripts/curator.py`), its replies applied by the board's own function
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reflexion.curate.curator_parse import curator_parse_rates
    from reflexion.curate.curator_replay import CURATED_KINDS, ask_curator, replay_curator

# the curator tools load the designs and the model runtime: imported when a script asks for
# them, so that the `memory` commands, which import this package's modules, do not pay for them
_LAZY = {
    "curator_parse_rates": "reflexion.curate.curator_parse",
    "CURATED_KINDS": "reflexion.curate.curator_replay",
    "ask_curator": "reflexion.curate.curator_replay",
    "replay_curator": "reflexion.curate.curator_replay",
}

__all__ = ["CURATED_KINDS", "ask_curator", "curator_parse_rates", "replay_curator"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        msg = f"module 'reflexion.curate' has no attribute {name!r}"
        raise AttributeError(msg)
    import importlib

    return getattr(importlib.import_module(_LAZY[name]), name)
