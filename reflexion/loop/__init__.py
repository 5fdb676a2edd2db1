"""The run machinery: config, runner, schedule, trial, the LLM actor, prompts, budget, retries
and the run folder. `reflexion.loop.runner.run` is the entry point."""
