"""What a run's model calls cost in money: a price in US dollars per million input and output
tokens, from `--price IN,OUT`, or from a small table of API models' list prices. A local model
costs tokens and seconds, not money, and `pricing` says so rather than pricing it at $0.

The table holds list prices as the providers published them on PRICES_TAKEN. Prices change (and
batch, cached-input and long-context tiers differ): check the provider's page, and give
`--price IN,OUT` (or change PRICES from Python) when the table is out of date.

    >>> pricing("openai:gpt-4o-mini", None).price
    Price(input=0.15, output=0.6, source='gpt-4o-mini, list price of 2025-06-01')
    >>> pricing("qwen2.5-coder-1.5b", None).note
    'local model: no money cost'
    >>> pricing("openai-compatible:http://127.0.0.1:8080/v1#smollm2-135m", None).note
    'local model: no money cost'
    >>> pricing("openai-compatible:http://gpu-box:8080/v1#qwen", None).note
    'no price: give --price IN,OUT'
    >>> round(pricing("openai:x", "2.5,10").price.of(1_000, 200), 6)
    0.0045
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from urllib.parse import urlsplit

from reflexion.core.errors import UsageError
from reflexion.core.records import Record
from reflexion.models.files import MODELS

PRICES_TAKEN = "2025-06-01"
# model name -> (USD per million input tokens, per million output tokens), list prices
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "gpt-3.5-turbo": (0.50, 1.50),
    "claude-3.5-sonnet": (3.00, 15.00),
    "claude-3.7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-3.5-haiku": (0.80, 4.00),
    "claude-3-haiku": (0.25, 1.25),
    "claude-opus-4": (15.00, 75.00),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-1.5-flash": (0.075, 0.30),
    "gemini-1.5-pro": (1.25, 5.00),
    "deepseek-chat": (0.27, 1.10),
    "deepseek-reasoner": (0.55, 2.19),
}
LOCAL = "local model: no money cost"
NO_PRICE = "no price: give --price IN,OUT"  # a model the table does not list
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


@dataclass(frozen=True)
class Price(Record):
    """US dollars per million input and output tokens, and where the numbers came from."""

    input: float
    output: float
    source: str = "--price"

    def of(self, input_tokens: int, output_tokens: int) -> float:
        """The money `input_tokens` and `output_tokens` cost at this price."""
        return input_tokens * self.input / 1e6 + output_tokens * self.output / 1e6


@dataclass(frozen=True)
class Pricing:
    """A run's price, or (`price` None) why it has none: a local model, no model, none known."""

    price: Price | None
    note: str = ""


def parse_price(text: str) -> str:
    """A `--price` value, checked: "IN,OUT" (two numbers of dollars per million tokens, at
    least 0), or a model name in the price table; ValueError says what was expected.

    >>> parse_price(" 2.5, 10 "), parse_price("gpt-4o")
    ('2.5,10', 'gpt-4o')
    """
    text = text.strip()
    if _table_name(text) is not None:
        return text
    parts = [p.strip() for p in text.split(",")]
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) != 2 or not all(math.isfinite(n) and 0 <= n <= 10_000 for n in numbers):
        msg = (
            "expected IN,OUT: US dollars per million input and output tokens (e.g. 2.5,10), "
            f"or a model of the price table ({', '.join(PRICES)}); got {text[:40]!r}"
        )
        raise ValueError(msg)
    return ",".join(parts)


def pricing(model: str | None, price: str | None) -> Pricing:
    """The price of a run of `model` (its config's `model`): `price` (a --price value) when
    given, else the table's for an API model it names, else why there is none."""
    if price:
        try:
            text = parse_price(price)
        except ValueError as exc:
            msg = f"--price {exc}"
            raise UsageError(msg) from None
        name = _table_name(text)
        if name is None:
            given = [float(p) for p in text.split(",")]
            return Pricing(Price(given[0], given[1], f"--price {text}"))
        return Pricing(_listed(name))
    if not model:
        return Pricing(None, "no model")
    if _local(model):
        return Pricing(None, LOCAL)
    named = model.rpartition("#")[2] if "#" in model else model.rpartition(":")[2]
    name = _table_name(named or model)
    if name is not None:
        return Pricing(_listed(name))
    return Pricing(None, NO_PRICE)


def _listed(name: str) -> Price:
    given = PRICES[name]
    return Price(given[0], given[1], f"{name}, list price of {PRICES_TAKEN}")


def _table_name(name: str) -> str | None:
    """The table's entry for a model name: the name itself, or the longest entry it starts
    with (gpt-4o-mini-2024-07-18 is gpt-4o-mini); dots and dashes in versions alike."""
    wanted = name.strip().lower()
    for dashed, dotted in (("claude-3-5", "claude-3.5"), ("claude-3-7", "claude-3.7")):
        wanted = wanted.replace(dashed, dotted)
    found = [n for n in PRICES if wanted == n or wanted.startswith(n + "-")]
    return max(found, key=len) if found else None


def _local(model: str) -> bool:
    """A model run in this process, or by a server on this machine."""
    if model in MODELS or model.endswith(".gguf"):
        return True
    prefix, _, rest = model.partition(":")
    if prefix != "openai-compatible":
        return False
    host = urlsplit(rest.partition("#")[0]).hostname or ""
    try:  # 127.0.0.1 to 127.255.255.255 and ::1; not a name such as 127.example.com
        return host in LOCAL_HOSTS or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
