"""A run: its settings, declared once (`config.py`, parsed by `parsers.py`), everything checked
before the first trial (`setup.py`), the trials run concurrently (`execute.py`, `schedule.py`)
or on a Ray cluster (`cluster.py`), under a token and time budget (`budget.py`), and what the run
returns (`results.py`). The public entry points are `reflexion.run` and `reflexion.arun`."""
