"""Reproducible decoding of the local model against prefix reuse: what it costs in tokens per
second, and how many greedy answers change without it when the same tasks run in another order
and at another concurrency.

Each task is a two-call exchange as Self-Refine or retry make it: the HumanEval prompt as the
runner sends it, then the same conversation grown by the answer and a request to check it (the
call that prefix reuse serves most of). The two modes take four passes over the tasks on one
server with one slot, as the runner's local model has: prefix reuse forward at concurrency 1,
reproducible forward at 1, prefix reuse backward at 4, reproducible backward at 4. Prints each
mode's output tokens per second (wall clock, and the server's own prompt + decode time), the
prompt tokens it computed, their ratio, and the tasks whose answers differed between the
forward and the backward pass, measured in this run.

    .venv/bin/python scripts/benchmark_reproducible.py [--model smollm2-135m] [--tasks 8]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from envs import make_env
from reflexion import ChatActor
from reflexion.models import DEFAULT_MODEL, ChatLocalGGUF

CHECK = "Check your function against the docstring's examples and give the corrected function."


@dataclass
class Pass:
    answers: dict[int, tuple[str, ...]] = field(default_factory=dict)
    output: int = 0
    computed: int = 0  # prompt tokens the server computed (not served from its cache)
    server_s: float = 0.0  # the server's prompt + decode time
    wall_s: float = 0.0


async def exchange(model: ChatLocalGGUF, asked: list[BaseMessage], tally: Pass) -> tuple[str, ...]:
    """The task's two calls, one after the other; their answers."""
    texts: list[str] = []
    for _ in range(2):
        reply = await model.ainvoke(asked, temperature=0.0)
        timings = reply.response_metadata["timings"]
        tally.output += reply.usage_metadata["output_tokens"] if reply.usage_metadata else 0
        tally.computed += timings["prompt_n"]
        tally.server_s += (timings["prompt_ms"] + timings["predicted_ms"]) / 1000
        texts.append(reply.text)
        asked = [*asked, AIMessage(reply.text), HumanMessage(CHECK)]
    return tuple(texts)


async def one_pass(
    model: ChatLocalGGUF, prompts: list[list[BaseMessage]], order: list[int], concurrency: int
) -> Pass:
    tally, gate = Pass(), asyncio.Semaphore(concurrency)

    async def task(i: int) -> None:
        async with gate:
            tally.answers[i] = await exchange(model, prompts[i], tally)

    start = time.perf_counter()
    await asyncio.gather(*(task(i) for i in order))
    tally.wall_s = time.perf_counter() - start
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"a local model ({DEFAULT_MODEL})")
    parser.add_argument("--tasks", type=int, default=8, help="HumanEval's first N (8)")
    parser.add_argument("--tokens", type=int, default=128, help="tokens per answer (128)")
    args = parser.parse_args()
    modes = {
        name: ChatLocalGGUF.named(args.model, max_tokens=args.tokens, reproducible=on)
        for name, on in (("prefix reuse", False), ("reproducible", True))
    }  # one server: equal settings share it
    actor = ChatActor(next(iter(modes.values())))
    prompts = [actor.prompt(t) for t in make_env(f"humaneval:{args.tasks}").tasks()]
    next(iter(modes.values())).load()
    forward, backward = list(range(len(prompts))), list(reversed(range(len(prompts))))
    passes: dict[str, list[Pass]] = {name: [] for name in modes}
    for order, concurrency in ((forward, 1), (backward, 4)):
        for name, model in modes.items():
            passes[name].append(asyncio.run(one_pass(model, prompts, order, concurrency)))
    report(args, passes)


def report(args: argparse.Namespace, passes: dict[str, list[Pass]]) -> None:
    print(f"{args.model}, {args.tasks} HumanEval tasks, 2 calls each, up to {args.tokens} tokens")
    print(
        f"{'mode':14} {'output':>7} {'computed':>9} {'wall tok/s':>11} {'server tok/s':>13}", end=""
    )
    print("  tasks changed (forward at 1 / backward at 4)")
    speed = {}
    for name, (first, second) in passes.items():
        output, computed = first.output + second.output, first.computed + second.computed
        wall, server = (
            output / (first.wall_s + second.wall_s),
            output / (first.server_s + second.server_s),
        )
        speed[name] = (wall, server, computed)
        changed = sum(first.answers[i] != second.answers[i] for i in first.answers)
        print(f"{name:14} {output:7d} {computed:9d} {wall:11.2f} {server:13.2f}", end="")
        print(f"  {changed} of {len(first.answers)}")
    (w0, s0, c0), (w1, s1, c1) = speed["prefix reuse"], speed["reproducible"]
    print(
        f"reproducible / prefix reuse: wall tok/s {w1 / w0:.2f}x, server tok/s {s1 / s0:.2f}x, ",
        end="",
    )
    print(f"prompt tokens computed {c1 / c0:.2f}x")


if __name__ == "__main__":
    main()
