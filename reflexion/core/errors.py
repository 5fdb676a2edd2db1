"""Errors that mean bad input, not a bug: the CLI prints them as one line and exits 2."""


class ReflexionError(Exception):
    """Base for every error a user can fix (bad arguments, a missing or foreign store, ...)."""


class UsageError(ReflexionError):
    """A bad argument or input file."""


class StoreError(ReflexionError):
    """A memory store that is missing, corrupt, or made with another embedding model."""
