"""One task x strategy x seed, as a strategy sees it: the trial's state and its record
(`recorded.py`), a board's rules as one pure function (`board.py`), the trial's reads and
writes of experience for other tasks (`experience.py`), where a recalled lesson came from
(`provenance.py`), the cheap checks of a lesson before it is stored (`hygiene.py`), what a
prompt is shown of a check (`feedback.py`), self-written tests (`self_tests.py`), and the run's
settings a trial reads (`settings.py`)."""
