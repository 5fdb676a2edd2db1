"""Command-line values of a run's settings, parsed: each raises ValueError with a message that
says what was expected (argparse shows it as a one-line error); `setting`, which declares one
field of RunConfig, whose choices may be an enum (`Order` and `Curation`, in
reflexion.core.lesson_records, whose members are the plain strings config.json holds).

    >>> role_limits("generate=512, reflect=128")
    {'generate': 512, 'reflect': 128}
"""

from __future__ import annotations

import dataclasses
import enum
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory import split_url
from memory.embedders import known_embedder
from memory.ranking import Ranking, parse_ranking
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Order


class Typed:
    """Base of a frozen dataclass of `setting` fields (RunConfig). A field whose choices are an
    enum holds the enum's member for its value, however it was given (a string from the command
    line, from Python or from a config.json); a value that is none of them is kept as given, for
    `validate` (check_fields) to refuse in one line."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]  # a dataclass's base
            kind, value = f.metadata.get("enum"), getattr(self, f.name)
            if kind is not None and value in kind.__members__.values():
                object.__setattr__(self, f.name, kind(value))

    def validate(self) -> Parsed:
        """Raise a one-line UsageError for a setting out of its range; the settings kept as
        text, parsed (see check_run)."""
        return check_run(self)


def positive(text: str) -> int:
    """A whole number of at least 1 (a command-line value).

    >>> positive("3")
    3
    """
    try:
        value = int(text)
    except ValueError:
        msg = f"expected a whole number, got {text!r}"
        raise ValueError(msg) from None
    if value < 1:
        msg = f"expected a number of at least 1, got {value}"
        raise ValueError(msg)
    return value


def path_text(text: str) -> str:
    """A folder as the run records it: `./store/` and `store` are one folder.

    >>> path_text("./store/")
    'store'
    """
    return str(Path(text))


def role_limits(text: str) -> dict[str, int]:
    """ "generate=512,reflect=128" -> {"generate": 512, "reflect": 128}."""
    out: dict[str, int] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        role, _, value = item.partition("=")
        try:
            out[role.strip()] = int(value)
        except ValueError:
            msg = f"expected ROLE=N pairs, got {item!r}"
            raise ValueError(msg) from None
    return out


def check_faults_and_budget(
    retries: int, call_timeout: float, timeout_s: float | None, max_tokens_total: int | None
) -> None:
    """A one-line UsageError for retries, timeouts or a token budget out of range."""
    if not 0 <= retries <= 100:
        msg = f"--retries must be between 0 and 100, got {retries}"
        raise UsageError(msg)
    seconds = {"call-timeout": call_timeout, "timeout": timeout_s}
    for name, value in seconds.items():
        if value is not None and not (0 < value <= 10**7 and math.isfinite(value)):
            msg = f"--{name} must be a number of seconds above 0, got {value}"
            raise UsageError(msg)
    if max_tokens_total is not None and max_tokens_total < 1:
        msg = f"--max-tokens-total must be at least 1, got {max_tokens_total}"
        raise UsageError(msg)


def setting(
    default: Any = None,
    *,
    help: str,  # noqa: A002 - argparse's name for it
    parse: Callable[[str], Any] | None = None,
    result: bool = False,
    limits: tuple[float, float] | None = None,
    choices: tuple[str, ...] | type[enum.Enum] | None = None,
    flag: str | None = None,
    label: str | None = None,
    cli: bool = True,
    factory: Callable[[], Any] | None = None,
    before: Any = dataclasses.MISSING,
    group: str = "",
) -> Any:
    """A RunConfig field with what the CLI, the report and the resume check need to know.
    `before`: what a config.json written before the field existed meant, when that is not the
    default (the default changed when the field came). `group`: the heading its option is
    listed under in `--help` (one of reflexion.runner.config.GROUPS). `choices` an enum: the
    field holds its members (see Typed)."""
    kind = choices if isinstance(choices, type) else None
    names = tuple(str(c.value) for c in kind) if kind is not None else choices
    metadata: dict[str, Any] = {"help": help, "parse": parse, "result": result, "limits": limits}
    metadata |= {"choices": names, "flag": flag, "label": label, "cli": cli, "before": before}
    metadata |= {"group": group, "enum": kind}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def meant_before(f: dataclasses.Field[Any]) -> Any:
    """What a `setting` field's value was before the field existed: its `before`, else its
    default (reflexion.runner.config.default_of)."""
    before = f.metadata["before"]
    if before is not dataclasses.MISSING:
        return before
    factory = f.default_factory
    return factory() if callable(factory) else f.default


def flag_of(f: dataclasses.Field[Any]) -> str:
    """The command-line flag of a RunConfig field ("--call-timeout" for call_timeout)."""
    return str(f.metadata.get("flag") or "--" + f.name.replace("_", "-"))


def label_of(f: dataclasses.Field[Any]) -> str:
    """How the report names a field."""
    return str(f.metadata.get("label") or f.name.replace("_", " "))


def check_fields(config: Any) -> None:
    """Raise a one-line UsageError for a field of `config` (a dataclass of `setting` fields)
    out of its limits or not one of its choices."""
    for f in dataclasses.fields(config):
        limits, value = f.metadata["limits"], getattr(config, f.name)
        if limits is not None and value is not None and not limits[0] <= value <= limits[1]:
            msg = f"{flag_of(f)} must be between {limits[0]} and {limits[1]}, got {value}"
            if f.name == "tasks":
                msg += "; leave it out (tasks=None) for all tasks"
            raise UsageError(msg)
    for f in dataclasses.fields(config):
        choices, value = f.metadata["choices"], getattr(config, f.name)
        if choices is not None and value not in choices:
            msg = f"{flag_of(f)} must be one of {', '.join(choices)}, got {value!r}"
            raise UsageError(msg)


def check_model_settings(
    max_tokens: dict[str, int], speculative: str, price: str | None, rank: str
) -> Ranking:
    """Raise a one-line UsageError for an unknown role or a limit out of range in
    --max-tokens, an unknown --speculative mode, a bad --price or --rank; the ranking parsed."""
    # here, not at the top: `positive` is imported by `reflexion memory`, which runs no model
    from reflexion.actor import ROLE_TOKENS
    from reflexion.models.prices import pricing
    from reflexion.models.server import check_speculative

    for role, limit in max_tokens.items():
        if role not in ROLE_TOKENS or not 1 <= limit <= 32_768:
            roles = ", ".join(ROLE_TOKENS)
            msg = f"--max-tokens {role}={limit}: roles are {roles}; limits 1..32768"
            raise UsageError(msg)
    check_speculative(speculative)
    pricing(None, price)  # a bad price from Python: refused before the run, not after
    try:
        return parse_ranking(rank)
    except ValueError as exc:
        msg = f"--rank {rank!r}: {exc}"
        raise UsageError(msg) from None


def check_one_store(memory: str | None, chroma_url: str | None) -> None:
    """A run shares one store, a folder or a server: naming both is refused, not settled.

    >>> check_one_store("shared", "http://10.0.0.5:8000")
    Traceback (most recent call last):
    ...
    reflexion.core.errors.UsageError: --memory DIR and --chroma-url URL name two stores: give one
    """
    if memory is not None and chroma_url is not None:
        msg = "--memory DIR and --chroma-url URL name two stores: give one"
        raise UsageError(msg)


def warn_unused(model: str | None, task_tokens: int | None, env: str) -> None:
    """Say on stderr which settings do nothing in a run: with no model (the env's scripted
    actor: the quadratic drill), no tokens are counted, so a token budget never binds."""
    if model is None and task_tokens is not None:
        print(
            f"reflexion: warning: --task-tokens does nothing for env {env!r}: its scripted "
            "actor calls no model, so no tokens are counted",
            file=sys.stderr,
        )


def check_memory_settings(config: Any) -> None:
    """The memory's and the cluster's settings of `config` (a RunConfig), checked by name before
    anything loads: a run whose strategies keep no lessons would otherwise record a value in
    config.json that a strategy added to its folder later could not use (the backend's name is
    checked once the env is made, since importing an env may register one:
    reflexion.runner.setup)."""
    embedder, chroma_url, executor = config.embedder, config.chroma_url, config.executor
    ray_address = config.ray_address
    check_one_store(config.memory, chroma_url)
    if not isinstance(embedder, str) or not known_embedder(embedder):
        msg = f"unknown --embedder {embedder!r}: expected 'all-MiniLM-L6-v2' or 'hash-N'"
        raise UsageError(msg)
    if chroma_url is not None:
        split_url(chroma_url)  # a bad url is a one-line error
    if ray_address is not None and executor != "ray":
        msg = "--ray-address names the cluster of --executor ray: add that, or leave it out"
        raise UsageError(msg)


@dataclass(frozen=True)
class Parsed:
    """What `check_run` parses of the settings a RunConfig keeps as text (as config.json holds
    them, however they were written), for the run to use rather than parse them again."""

    ranking: Ranking  # --rank


def check_run(config: Any) -> Parsed:
    """Raise a one-line UsageError for a setting of `config` (a RunConfig) out of its range;
    the settings kept as text, parsed."""
    check_fields(config)  # each field's limits and choices, as `setting` declared them
    if not 0.0 <= config.temperature <= 2.0 or not 0 <= config.seed < 2**31:
        msg = "--temperature must be in [0, 2] and --seed in [0, 2^31)"
        raise UsageError(msg)
    if config.stream_seed is not None and config.order != Order.STREAM:
        msg = "--stream-seed shuffles the order of a stream: it needs --order stream"
        raise UsageError(msg)
    if config.gate and (config.order != Order.STREAM or config.signal != "visible"):
        msg = "--gate replays the tasks a stream has run by their visible check: it needs "
        msg += "--order stream and --signal visible"
        raise UsageError(msg)
    if config.gate and config.executor == "ray":
        msg = "--gate replays within the trial's process: run it with --executor local"
        raise UsageError(msg)
    rank = str(config.rank)
    ranking = check_model_settings(config.max_tokens, config.speculative, config.price, rank)
    check_faults_and_budget(
        config.retries, config.call_timeout, config.timeout_s, config.max_tokens_total
    )
    check_memory_settings(config)
    return Parsed(ranking)
