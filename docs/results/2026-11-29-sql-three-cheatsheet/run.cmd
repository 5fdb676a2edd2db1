2026-11-29T00:17:00Z start cheatsheet at 49251e3 with 0 done
2026-11-29T00:23:52Z paused (SIGSTOP) for a curator probe and a release check
2026-11-29T00:29:06Z resumed (SIGCONT)
2026-11-29T00:30:46Z paused (SIGSTOP) for a curator probe, a short bank-scaled smoke run and a release check (.ci/run from a fresh clone)
2026-11-29T00:44:37Z resumed (SIGCONT)
2026-11-29T01:45:05Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
2026-11-29T01:56:36Z resumed in a new session
2026-11-29T01:56:36Z start cheatsheet at 49251e3 with 76 done
2026-11-29T03:10:16Z exit 0
