"""Curating what a run learned: the shared code under `reflexion memory` and the web memory
page. It reaches every store through the Curated contract (reflexion.core.curation) that each
memory backend offers, and knows no concrete store.

    stores   where a run folder's stores are, opened for reading or for changing (with a lock)
    lessons  finding a lesson or a task among them, searching, the recalls a trace recorded
    audit    rerunning a recalling episode without a lesson: what that lesson did

A curator's reply is checked as the board checks it (reflexion.trial.hygiene): `placeholder`
says why a text is the prompt's blanks copied back, `same_wording` whether two lessons say the
same words (scripts/replay_curator.py and scripts/curator_parse.py use both).

    >>> same_wording("Use an INNER JOIN.", "use an  inner join")
    True
"""

from reflexion.trial.hygiene import placeholder, same_wording

__all__ = ["placeholder", "same_wording"]
