"""The package's version: one place, read by pyproject.toml, `reflexion --version` and
`reflexion.__version__`."""

VERSION = "0.1.0"
