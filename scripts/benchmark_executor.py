"""The Ray executor on a local cluster of 2 worker nodes against the local executor, on the same
job: the example JSONL tasks with a served model that takes a fixed time per call (a stand-in
for a remote model server). Prints the wall time of each and their ratios, measured in one run,
and checks that both wrote the same verdicts.

    .venv/bin/python scripts/benchmark_executor.py
    .venv/bin/python scripts/benchmark_executor.py --latency 0.5 --seeds 4
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any

from reflexion import RunConfig, run

ANSWER = "```python\ndef f():\n    return None\n```"


def served_model(latency: float) -> ThreadingHTTPServer:
    """An OpenAI-compatible chat endpoint on loopback that answers every call after `latency`."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers["Content-Length"]))
            time.sleep(latency)
            body = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": ANSWER},
                        }
                    ],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def timed(config: RunConfig) -> tuple[float, list[tuple[str, str, int, bool]]]:
    start = time.perf_counter()
    results = run(config, report=False)  # the runner alone, not the report
    verdicts = sorted((r.strategy, r.task_id, r.seed, r.final_passed) for r in results)
    return time.perf_counter() - start, verdicts


Row = tuple[str, float, list[tuple[str, str, int, bool]]]  # label, seconds, verdicts


def measure(base: RunConfig, ray_address: str) -> list[Row]:
    """The same run locally (2 and 4 trials at a time) and on the Ray cluster, each timed."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, changes in (
            ("local, 2 trials at a time", {"concurrency": 2}),
            ("local, 4 trials at a time", {"concurrency": 4}),
            ("ray, 2 worker nodes", {"executor": "ray", "ray_address": ray_address}),
        ):
            config = RunConfig(**(base.to_dict() | changes | {"out": f"{tmp}/{len(rows)}"}))
            rows.append((label, *timed(config)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per model call")
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    from ray.cluster_utils import Cluster

    tasks = Path(str(files("envs") / "examples" / "tasks.jsonl"))
    server = served_model(args.latency)
    model = f"openai-compatible:http://127.0.0.1:{server.server_address[1]}/v1#m"
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        for _ in range(2):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        base = RunConfig(
            env=f"jsonl:{tasks}",
            strategies=("single", "self-refine"),
            episodes=3,
            seeds=args.seeds,
            model=model,
        )
        rows = measure(base, cluster.address)
    finally:
        cluster.shutdown()  # type: ignore[no-untyped-call]
        server.shutdown()
    trials = len(rows[0][2])
    print(
        f"{trials} trials (8 tasks x 2 strategies x {args.seeds} seeds, up to 3 episodes), "
        f"model calls of {args.latency} s"
    )
    for label, seconds, verdicts in rows:
        same = "same verdicts" if verdicts == rows[0][2] else "OTHER VERDICTS"
        print(f"  {label:<28} {seconds:7.1f} s   {seconds / rows[0][1]:5.2f}x   {same}")


if __name__ == "__main__":
    main()
