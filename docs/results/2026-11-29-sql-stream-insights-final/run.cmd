2026-11-29T06:41:52Z start insights at dd7c44d with 0 done
2026-11-29T06:42:37Z paused (SIGSTOP) for the release check
2026-11-29T06:50:47Z resumed after the release check (.ci/run from a fresh clone at fffea33 passed)
2026-11-29T07:24:24Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
2026-11-29T07:26:04Z resumed in place after the snapshot at 85, for the session's last minutes
2026-11-29T07:26:04Z start insights at dd7c44d with 85 done
2026-11-29T07:38:14Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
2026-11-29T07:57:40Z start insights at dd7c44d with 113 done (new session, new machine checkout; model re-installed)
2026-11-29T08:31:36Z finished rc=0
