"""The package's version: one place, read by pyproject.toml, `reflexion --version` and
`reflexion.__version__`, and recorded in each run folder's config.json (a folder written by a
newer version is not resumed by this one).

    >>> newer("0.10.0", than="0.9.3"), newer("0.1.0", than="0.1.0"), newer("", than="0.1.0")
    (True, False, False)
"""

VERSION = "0.1.0"


def newer(version: str, than: str = VERSION) -> bool:
    """Whether `version` is a later release than `than`, compared number by number (a part that
    is not a number counts as 0, and a folder with no version was written before 0.1.0)."""
    return _numbers(version) > _numbers(than)


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))
