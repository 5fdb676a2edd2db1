"""Speculative decoding of the default local model on this machine: decode speed against plain
decoding on HumanEval prompts as the runner sends them (generate, with the prompt's code
prefilled), how many greedy outputs changed, and pass@1 on the official tests, paired per
problem. The modes take turns on each prompt, so a busy moment hits them alike.

    .venv/bin/python scripts/benchmark_speculative.py
    .venv/bin/python scripts/benchmark_speculative.py --modes none,ngram --tasks 20 --no-prefill
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage

from envs.humaneval import HumanEvalEnv
from reflexion import ChatActor, Task
from reflexion.models import DEFAULT_MODEL, ChatLocalGGUF


@dataclass
class Tally:
    tokens: int = 0
    decode_ms: float = 0.0
    prompt_ms: float = 0.0
    outputs: list[str] = field(default_factory=list)
    passed: list[bool] = field(default_factory=list)


def messages(model: ChatLocalGGUF, task: Task, prefill: bool) -> list[BaseMessage]:
    asked = ChatActor(model).prompt(task)
    return [*asked, AIMessage(task.spec["answer_prefix"])] if prefill else asked


def measure(
    modes: list[str], tasks: list[Task], env: HumanEvalEnv, prefill: bool
) -> dict[str, Tally]:
    models = {m: ChatLocalGGUF.named(DEFAULT_MODEL, speculative=m) for m in modes}
    tallies = {m: Tally() for m in modes}
    for i, task in enumerate(tasks):
        for mode in modes[i % len(modes) :] + modes[: i % len(modes)]:  # take turns going first
            asked = messages(models[mode], task, prefill)
            reply = models[mode].invoke(asked, max_tokens=512, temperature=0.0)
            timings = reply.response_metadata["timings"]
            tally = tallies[mode]
            tally.tokens += timings["predicted_n"]
            tally.decode_ms += timings["predicted_ms"]
            tally.prompt_ms += timings["prompt_ms"]
            tally.outputs.append(reply.text)
            tally.passed.append(env.evaluate(task, reply.text).solved)
        print(f"  {i + 1}/{len(tasks)} {task.id}", flush=True)
    return tallies


def report(tallies: dict[str, Tally], prefill: bool) -> None:
    plain = tallies["none"]
    speed = plain.tokens / plain.decode_ms
    print(f"\n{len(plain.outputs)} HumanEval prompts, greedy, prompt's code prefilled: {prefill}")
    print(f"{'mode':28} {'tokens':>7} {'decode tok/s':>13} {'ratio':>6} {'prompt s':>9}", end="")
    print(f" {'changed':>8} {'pass@1':>6} won/lost")
    for mode, t in tallies.items():
        tok_s = t.tokens / t.decode_ms * 1000
        changed = sum(a != b for a, b in zip(t.outputs, plain.outputs, strict=True))
        won = sum(a and not b for a, b in zip(t.passed, plain.passed, strict=True))
        lost = sum(b and not a for a, b in zip(t.passed, plain.passed, strict=True))
        print(
            f"{mode:28} {t.tokens:7d} {tok_s:13.2f} {t.tokens / t.decode_ms / speed:5.2f}x"
            f" {t.prompt_ms / 1000:9.1f} {changed:8d} {sum(t.passed):3d}/{len(t.passed)}"
            f" {won:5d}/{lost}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--modes", default="none,ngram,draft:qwen2.5-coder-0.5b")
    parser.add_argument("--tasks", type=int, default=20, help="humaneval:spread-N (default 20)")
    parser.add_argument("--no-prefill", action="store_true", help="let answers repeat the prompt")
    args = parser.parse_args()
    modes = ["none", *(m for m in args.modes.split(",") if m != "none")]
    env = HumanEvalEnv.from_spec(f"spread-{args.tasks}")
    report(measure(modes, env.tasks(), env, not args.no_prefill), not args.no_prefill)


if __name__ == "__main__":
    main()
