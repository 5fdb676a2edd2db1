"""Decode speed through our chat model (ChatActor -> ChatLocalGGUF, with LangChain in between)
against raw xllamacpp, on the same HumanEval generate requests and the same server settings.
Goal: at least 0.95x. The two take turns going first on each prompt; each has a server of its
own, so both process every prompt once.

    .venv/bin/python scripts/benchmark_decode.py [--tasks 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass

from envs.humaneval import HumanEvalEnv
from reflexion import ChatActor, Task
from reflexion.models import DEFAULT_MODEL, ChatLocalGGUF, start_server

TOKENS = 256


@dataclass
class Total:
    tokens: int = 0
    seconds: float = 0.0

    def add(self, tokens: int, seconds: float) -> None:
        self.tokens += tokens
        self.seconds += seconds


def ours(actor: ChatActor, task: Task) -> tuple[int, float]:
    start = time.perf_counter()
    call = asyncio.run(actor.generate(task, (), sample=0))
    return call.output_tokens, time.perf_counter() - start


def raw(server: object, model: ChatLocalGGUF, task: Task) -> tuple[int, float]:
    from langchain_core.messages import AIMessage

    asked = [*ChatActor(model).prompt(task), AIMessage(task.spec["answer_prefix"])]
    request = model.request(asked, max_tokens=TOKENS, temperature=0.0)
    start = time.perf_counter()
    reply = server.handle_chat_completions(request)  # type: ignore[attr-defined]
    reply = reply if isinstance(reply, dict) else json.loads(reply)
    return int(reply["usage"]["completion_tokens"]), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=10, help="humaneval:spread-N (default 10)")
    args = parser.parse_args()
    model = ChatLocalGGUF.named(DEFAULT_MODEL)
    model.load()
    server = start_server(model.settings)  # a second server, same settings
    actor = ChatActor(model, max_tokens={"generate": TOKENS})
    totals = {"ours": Total(), "raw": Total()}
    for i, task in enumerate(HumanEvalEnv.from_spec(f"spread-{args.tasks}").tasks()):
        for name in ("raw", "ours") if i % 2 == 0 else ("ours", "raw"):
            tokens, seconds = raw(server, model, task) if name == "raw" else ours(actor, task)
            totals[name].add(tokens, seconds)
    speed = {name: t.tokens / t.seconds for name, t in totals.items()}
    print(f"{args.tasks} HumanEval generate requests, greedy, up to {TOKENS} tokens each")
    for name, t in totals.items():
        print(f"  {name:5} {t.tokens:6d} tokens in {t.seconds:6.1f} s  {speed[name]:6.2f} tok/s")
    print(f"ratio ours / raw: {speed['ours'] / speed['raw']:.3f}x (goal >= 0.95x)")


if __name__ == "__main__":
    main()
