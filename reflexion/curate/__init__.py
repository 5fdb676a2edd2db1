"""Curating what a run learned: the shared code under `reflexion memory` and the web memory
page. It reaches every store through the Curated contract (reflexion.core.curation) that each
memory backend offers, and knows no concrete store.

    stores   where a run folder's stores are, opened for reading or for changing (with a lock)
    lessons  finding a lesson or a task among them as a person names it, searching by text
    recalls  the recalls a run's trace recorded: of a lesson, and those an attempt saw
    audit    rerunning a recalling episode without a lesson: what that lesson did
"""
