"""The model's roles: the chat-model actor, each role one timed, token-counted call (`chat.py`),
their prompts (`prompts.py`), memory in a prompt (`memory_text.py`), structured reflections
(`structured.py`), retries with backoff (`backoff.py`) and rollouts in interactive envs
(`rollout.py`)."""

# Output token limits per role: answers are whole programs; feedback and reflections are notes.
ROLE_TOKENS = {"generate": 512, "refine": 512, "correct": 512, "feedback": 256, "reflect": 192}
ROLE_TOKENS |= {"tests": 384}  # the unit tests a model writes for --signal self-tests
ROLE_TOKENS |= {"act": 24}  # one command of a rollout in an interactive env (textworld)
# experience for other tasks (rule edits, a rewritten cheatsheet, items), and a first answer
# that may revise itself in place (`proactive`: its drafts need room)
ROLE_TOKENS |= {"distill": 512, "propose": 768}
# Under the code protocol (--code-rounds, an env that runs programs) an answer needs room for a
# program: Dynamic Cheatsheet allows 2,048 tokens; at least 1,024 here, to keep a CPU run short.
CODE_ROLES = ("generate", "refine", "correct", "propose")
CODE_TOKENS = 1024
# and a curator, who reads every round's program, twice an answer's room, as Dynamic Cheatsheet
# gives its curator (room for a program of its own in the memory)
CURATOR_CODE_TOKENS = 2 * CODE_TOKENS
