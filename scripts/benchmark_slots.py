"""Decode throughput of the local model with one server slot against two, on the load a stream
run puts on it: two arms answer the same SQL question at once (here a greedy answer and a
sampled one). With one slot the server answers them one after the other; with two it decodes
both in one batch. Each setting has a server of its own, warmed with the schema first, and the
two take turns going first on each question. Prints each setting's tokens per second and their
ratio, measured in this run.

    .venv/bin/python scripts/benchmark_slots.py [--questions 6] [--tokens 256]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from envs import make_env
from reflexion import ChatActor, Task
from reflexion.models import DEFAULT_MODEL, ChatLocalGGUF


async def both(model: ChatLocalGGUF, task: Task, tokens: int) -> tuple[int, float]:
    """The question asked twice at once, greedy and sampled: output tokens and wall seconds."""
    asked = ChatActor(model).prompt(task)
    start = time.perf_counter()
    replies = await asyncio.gather(
        model.ainvoke(asked, max_tokens=tokens, temperature=0.0),
        model.ainvoke(asked, max_tokens=tokens, temperature=0.7, seed=1),
    )
    seconds = time.perf_counter() - start
    made = sum((r.usage_metadata or {"output_tokens": 0})["output_tokens"] for r in replies)
    return made, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=6, help="the SQL env's first N (6)")
    parser.add_argument("--tokens", type=int, default=256, help="tokens per answer (256)")
    args = parser.parse_args()
    tasks = make_env("sql").tasks()
    # reproducible decoding takes one call at a time: slots batch only without it
    models = {
        slots: ChatLocalGGUF.named(DEFAULT_MODEL, parallel=slots, reproducible=False)
        for slots in (1, 2)
    }
    for model in models.values():
        model.load()
        asyncio.run(both(model, tasks[-1], 8))  # the schema into every slot's cache
    tokens = dict.fromkeys(models, 0)
    seconds = dict.fromkeys(models, 0.0)
    for i, task in enumerate(tasks[: args.questions]):
        for slots in (1, 2) if i % 2 == 0 else (2, 1):
            made, took = asyncio.run(both(models[slots], task, args.tokens))
            tokens[slots] += made
            seconds[slots] += took
    speed = {slots: tokens[slots] / seconds[slots] for slots in models}
    print(f"{args.questions} SQL questions, each asked twice at once, up to {args.tokens} tokens")
    for slots in models:
        rate = f"{speed[slots]:6.2f} tok/s"
        print(f"  {slots} slot(s)  {tokens[slots]:6d} tokens in {seconds[slots]:6.1f} s  {rate}")
    print(f"ratio two slots / one: {speed[2] / speed[1]:.2f}x")


if __name__ == "__main__":
    main()
