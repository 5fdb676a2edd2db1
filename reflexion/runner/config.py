"""A run's settings, declared once. Each field of `RunConfig` carries its command-line help, its
limits, and whether it changes what a trial does (`result`: a resumed folder must agree on it).
The CLI builds its options from these fields, the report labels its facts with them, and the
resume check compares the `result` ones.

    >>> RunConfig(env="quadratic", strategies=("reflexion",)).episodes
    4
    >>> "episodes" in RESULT_FIELDS and "concurrency" not in RESULT_FIELDS
    True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from memory.backend import DEFAULT_COLLECTION, DEFAULT_EMBEDDER, collection_name
from reflexion.actor import ROLE_TOKENS
from reflexion.core.lesson_records import Curation, GateRule, Order
from reflexion.core.records import Record
from reflexion.models.prices import PRICES, PRICES_TAKEN, parse_price
from reflexion.runner.parsers import Typed, meant_before, path_text, positive, role_limits, setting
from reflexion.trial.feedback import FEEDBACK_MODES

# The headings `--help` lists the options under, in this order (a setting's `group`).
RUN, BUDGET, MEMORY, MODEL = "what to run", "budget and signal", "memory", "model"
EXECUTION, OUTPUT = "execution", "output"
GROUPS = (RUN, BUDGET, MEMORY, MODEL, EXECUTION, OUTPUT)


@dataclass(frozen=True)
class RunConfig(Typed, Record):
    """What to run. `env` and `strategies` name an env and strategies (the Python API may pass
    objects instead); every other field has a default. A choice kept as an enum (`order`,
    `curation`) holds its member, given as its string or not; `validate()` parses (Typed)."""

    env: str = setting(
        "",
        help="quadratic (no LLM), humaneval[:N|:spread-N|:first-miss|:ids=...], "
        "constrained:N, textworld:N[,rooms=R,objects=O,length=L,steps=S], "
        "cooking:N[,recipe=R,take=T,go=G,cook=0|1,cut=0|1,open=0|1,steps=S] (for both games "
        "the held-out check is the visible replay), game24:N[,seed=S,protocol=code|expression] "
        "(visible and held-out checks are one: the puzzle states its criterion), sql[:N,seed=S] "
        "(questions over one shop database; the rows must equal the gold query's), jsonl:PATH, "
        "python:MODULE:ATTR, or a name you registered",
        result=True,
        group=RUN,
    )
    strategies: tuple[str, ...] = setting((), help="strategy names", cli=False, group=RUN)
    out: str | None = setting(
        help="run folder (default runs/ENV-TIME); an existing one is resumed", group=OUTPUT
    )
    episodes: int = setting(
        4,
        help="most candidates per task for every strategy",
        parse=positive,
        result=True,
        limits=(1, 100),
        label="episodes (budget per task)",
        group=BUDGET,
    )
    tasks: int | None = setting(
        help="run only the first N tasks (default: all tasks; tasks=None from Python)",
        parse=positive,
        result=True,
        limits=(1, 100_000),
        group=RUN,
    )
    seeds: int = setting(
        1,
        help="run seeds 0..N-1. Every call decodes greedily except best-of-N's later samples, so "
        "with a deterministic model the seeds of the other strategies repeat the same trial "
        "(the run's cache answers them): more seeds add samples to resample only",
        parse=positive,
        result=True,
        limits=(1, 1000),
        group=RUN,
    )
    model: str | None = setting(
        help="a local model (qwen2.5-coder-1.5b, the default; qwen2.5-coder-0.5b; smollm2-135m; "
        "a .gguf path), openai:NAME, openai-compatible:URL[#MODEL], or python:MODULE:ATTR; "
        "quadratic's scripted actor needs none",
        result=True,
        group=MODEL,
    )
    curator_model: str | None = setting(
        help="a model that writes the memory for other tasks (the distill role: rules, the "
        "cheatsheet, items) while --model answers, as in ExpeL and MemP, where a stronger "
        "model writes what a weaker one uses; the same names as --model (default: --model)",
        result=True,
        group=MODEL,
    )
    speculative: str = setting(
        "none",
        help="speculative decoding of a local model: none; ngram (drafts from text in the "
        "context); or draft:MODEL (a smaller model, e.g. draft:qwen2.5-coder-0.5b). When "
        "each pays: docs/models.md",
        result=True,
        group=MODEL,
    )
    reproducible: bool = setting(
        True,
        help="a local model reuses no prompt prefix from its cache: each prompt is computed "
        "from scratch, so a greedy answer is the same whatever ran before it and at any "
        "--concurrency. --no-reproducible reuses the prefix a slot holds (fewer prompt tokens "
        "to compute; answers then vary with the order of calls: see docs/models.md)",
        flag="--no-reproducible",
        result=True,
        label="reproducible decoding",
        before=False,  # runs made before the setting reused prefixes
        group=MODEL,
    )
    task_tokens: int | None = setting(
        help="equal-token mode: no model call starts once a trial used N tokens (its first "
        "answer is always asked); set --episodes high enough that the tokens bind",
        parse=positive,
        result=True,
        limits=(1, 10_000_000),
        label="tokens per task",
        group=BUDGET,
    )
    concurrency: int = setting(
        4, help="trials in flight", parse=positive, limits=(1, 256), group=EXECUTION
    )
    k: int = setting(
        3,
        help="reflections recalled per episode",
        parse=positive,
        result=True,
        limits=(1, 100),
        label="recall k",
        group=MEMORY,
    )
    scope: str = setting(
        "task",
        help="recall from the same task only, or from any task by similarity",
        choices=("task", "global"),
        result=True,
        label="recall scope",
        group=MEMORY,
    )
    feedback: str = setting(
        "actionable",
        help="what the model sees of a check, in every strategy that uses one: actionable (the "
        "env's own feedback, and Self-Refine's written feedback), generic (a fixed 'there may be "
        "an error in your answer; check it and try again'), or none (only the score)",
        choices=FEEDBACK_MODES,
        result=True,
        group=BUDGET,
    )
    signal: str = setting(
        "visible",
        help="what scores a code candidate for the strategies: visible (the task's own visible "
        "tests, e.g. HumanEval's docstring examples), self-tests (unit tests the model writes "
        "from the prompt before the first attempt, as in Reflexion), or both",
        choices=("visible", "self-tests", "both"),
        result=True,
        group=BUDGET,
    )
    reflection: str = setting(
        "free",
        help="how a reflection is asked for: free (a few sentences) or structured (a JSON object "
        "of diagnosis, fix and failing test; the local model is held to its schema)",
        choices=("free", "structured"),
        result=True,
        group=MODEL,
    )
    curation: Curation = setting(
        Curation.JSON,
        help="how a curator writes memory for other tasks (insights, cheatsheet, bank): json (a "
        "reason, then bounded operations held to the design's schema: a grammar locally, "
        "structured output on OpenAI; the cheatsheet by ACE's delta operations) or text "
        "(free-text lines; the sheet rewritten whole). Answers are never constrained",
        choices=Curation,
        result=True,
        group=MODEL,
    )
    self_tests: int = setting(
        5,
        help="most unit tests the model writes per task (--signal self-tests or both)",
        parse=positive,
        result=True,
        limits=(1, 50),
        label="self-tests per task",
        group=BUDGET,
    )
    order: Order = setting(
        Order.PARALLEL,
        help="parallel, or stream: one task at a time in the env's order (or shuffled by "
        "--stream-seed), so with --scope global a task recalls the lessons of the tasks before it",
        choices=Order,
        result=True,
        group=RUN,
    )
    stream_seed: int | None = setting(
        help="with --order stream: shuffle the task order once with this seed, the same order "
        "for every strategy (config.json records it, so a resume and the report keep it); "
        "default: the env's order",
        parse=int,
        result=True,
        limits=(0, 2**31 - 1),
        label="stream shuffle seed",
        group=RUN,
    )
    dedup: float | None = setting(
        help="merge a new reflection into a stored one the trial could recall that is at least "
        "this similar (cosine, e.g. 0.95), keeping both provenances; off by default, since "
        "lessons that differ only in numbers score above 0.95",
        parse=float,
        result=True,
        limits=(0.0, 1.0),
        label="merge lessons at similarity",
        group=MEMORY,
    )
    code_rounds: int = setting(
        3,
        help="where the env runs a reply's program (game24): up to N times, run it in the "
        "sandbox, show the model what it printed and ask again, as Dynamic Cheatsheet runs "
        "every arm; each round's tokens count; answers get at least 1,024 tokens, and a "
        "curator, who is shown every round, 2,048 (0: no rounds)",
        parse=int,
        result=True,
        limits=(0, 10),
        label="code rounds per answer",
        group=BUDGET,
    )
    memory_tokens: int = setting(
        800,
        help="the most memory text (recalled lessons, exemplars, rules, the cheatsheet) one "
        "prompt may carry, in tokens (counted as 4 characters each); what is over is left out, "
        "the least relevant first, and the report shows memory's share of each role's prompts",
        parse=positive,
        result=True,
        limits=(1, 100_000),
        label="memory tokens per prompt",
        group=MEMORY,
    )
    frozen_memory: bool = setting(
        False,
        help="recall from the memory (e.g. --memory DIR, learned by another run) but store and "
        "change nothing: a frozen-memory transfer",
        result=True,
        label="frozen memory",
        group=MEMORY,
    )
    warm_start: bool = setting(
        False,
        help="recall what other runs wrote on these same tasks (off: leave-one-task-out)",
        result=True,
        group=MEMORY,
    )
    gate: int = setting(
        0,
        help="replay up to K earlier tasks of the stream with a new lesson and without it; store "
        "it marked rejected, recalled by none, unless it won more than lost (needs --order stream)",
        parse=int,
        result=True,
        limits=(0, 64),
        label="gate replays",
        before=0,
        group=MEMORY,
    )
    gate_rule: GateRule = setting(
        GateRule.HELPS,
        help="when --gate admits a lesson: helps, it won more replays than lost; no-worse, it "
        "was replayed and lost no more than it won (all ties admit)",
        choices=GateRule,
        result=True,
        label="gate rule",
        group=MEMORY,
    )
    memory_backend: str = setting(
        "chroma",
        help="the memory of strategies that keep lessons (reflexion): chroma, a vector store "
        "ranked by similarity; window, the last k reflections of the task",
        result=True,
        group=MEMORY,
    )
    memory: str | None = setting(
        help="a Chroma store folder to share across runs (default: OUT/memory)",
        parse=path_text,
        result=True,
        group=MEMORY,
    )
    memory_mode: str = setting(
        "write",
        help="with --memory DIR or --chroma-url: write (the run adds its lessons to that store) "
        "or copy (the run starts from a copy of it in OUT/memory and adds its lessons there; "
        "the store stays as it was)",
        choices=("write", "copy"),
        result=True,
        group=MEMORY,
    )
    chroma_url: str | None = setting(
        help="use a Chroma server (http://host:port) instead",
        result=True,
        group=MEMORY,
    )
    collection: str = setting(
        DEFAULT_COLLECTION,
        help="the Chroma collection the run's lessons go to and are recalled from: runs that "
        "share a store (--memory DIR, --chroma-url) keep their lessons apart under names of "
        "their own; 3-512 characters of letters, digits, '.', '_' and '-'",
        parse=collection_name,
        result=True,
        group=MEMORY,
    )
    rank: str = setting(
        "task=0.25,recency=0.2",
        help="how the chroma memory ranks the lessons a scope admits: similarity + task * [the "
        "asking task's own] + recency * (1 for the newest candidate .. 0 for the oldest); "
        "'similarity' for similarity alone",
        result=True,
        label="recall ranking",
        before="similarity",  # what recall did before the field existed
        group=MEMORY,
    )
    embedder: str = setting(
        DEFAULT_EMBEDDER,
        help="embedding model of the memory (hash-N: a test-only hash embedder)",
        result=True,
        group=MEMORY,
    )
    temperature: float = setting(
        0.8,
        help="sampling temperature of best-of-N samples after the first, and of "
        "self-refine-sampled's feedback and refinements; every other call decodes greedily",
        parse=float,
        result=True,
        group=MODEL,
    )
    seed: int = setting(
        0, help="sampling seed", parse=int, result=True, label="sampling seed", group=MODEL
    )
    max_tokens: dict[str, int] = setting(
        help="per-role output limits, e.g. generate=512,reflect=128 (defaults: "
        + ", ".join(f"{role} {limit}" for role, limit in ROLE_TOKENS.items())
        + "; a curator's reply held to a schema gets room for the longest one it admits)",
        parse=role_limits,
        result=True,
        factory=dict,
        group=MODEL,
    )
    retries: int = setting(
        3,
        help="more tries of a model call that failed transiently (timeout, lost connection, "
        "HTTP 429 or 5xx), with exponential backoff from 0.5 s; then the attempt fails",
        parse=int,
        group=EXECUTION,
    )
    call_timeout: float = setting(
        600.0,
        help="seconds one model call may take; a slower one counts as a transient failure",
        parse=float,
        group=EXECUTION,
    )
    max_tokens_total: int | None = setting(
        help="stop once this invocation's model calls used N tokens: no new trial starts, "
        "trials in flight are cancelled, finished ones are kept; exit code 3, and the same "
        "command (a larger budget allowed) resumes the run",
        parse=int,
        group=BUDGET,
    )
    timeout_s: float | None = setting(
        help="stop after this many seconds, as --max-tokens-total does (exit code 3); the clock "
        "starts after the one-time loads (model, embedder; not a Ray worker's model load)",
        parse=float,
        flag="--timeout",
        group=BUDGET,
    )
    executor: str = setting(
        "local",
        help="where trials run: local (here) or ray (Ray tasks on a cluster: --env and --model "
        "by name, and a Chroma server, --chroma-url, for strategies that keep lessons)",
        choices=("local", "ray"),
        group=EXECUTION,
    )
    ray_address: str | None = setting(help="with --executor ray: the cluster", group=EXECUTION)
    price: str | None = setting(
        help="the report's cost: IN,OUT, US dollars per million tokens in and out (e.g. 2.5,10) "
        f"or a model of the price table ({', '.join(list(PRICES)[:3])}, ...; prices of "
        f"{PRICES_TAKEN}); default: the table's price of an API --model. No trial changes: "
        "`reflexion report RUN --price` reprices a run",
        parse=parse_price,
        label="price (USD per million tokens in, out)",
        group=OUTPUT,
    )
    run_id: str = setting("", help="the run's id (its folder's)", cli=False, group=OUTPUT)


FIELDS = {f.name: f for f in dataclasses.fields(RunConfig)}
# Fields that change what a trial does: a resumed folder must agree on all of them. Retries and
# budgets are not among them, so a resume may raise them.
RESULT_FIELDS = tuple(name for name, f in FIELDS.items() if f.metadata["result"])


def default_of(name: str) -> Any:
    """The default of a field: what a config.json written before the field existed meant."""
    return meant_before(FIELDS[name])
