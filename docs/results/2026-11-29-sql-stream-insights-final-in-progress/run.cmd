2026-11-29T06:41:52Z start insights at dd7c44d with 0 done
2026-11-29T06:42:37Z paused (SIGSTOP) for the release check
2026-11-29T06:50:47Z resumed after the release check (.ci/run from a fresh clone at fffea33 passed)
2026-11-29T07:24:24Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
