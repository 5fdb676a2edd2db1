2026-11-28T11:20:11Z start at a023ad0
2026-11-28T11:36:07Z stopped (SIGTERM) at the session's end; a snapshot is committed in the repository
2026-11-28T11:43:53Z resumed after the snapshot (rows past 66 are not in the repository's copy)
2026-11-28T11:43:53Z start at a023ad0
2026-11-28T11:53:32Z stopped (SIGTERM) at the session's end; the snapshot in the repository is updated to this point
2026-11-28T12:03:06Z resumed in a new session (folder survived)
2026-11-28T12:03:06Z start at a023ad0
2026-11-28T13:30:49Z exit 0
