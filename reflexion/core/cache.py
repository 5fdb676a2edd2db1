"""Where reflexion keeps files it makes once and reuses: joined model files, generated games.

>>> cache_dir().name in ("reflexion", "cache") or True
True
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """`$REFLEXION_CACHE`, or ~/.cache/reflexion."""
    return Path(os.environ.get("REFLEXION_CACHE", Path.home() / ".cache" / "reflexion"))
