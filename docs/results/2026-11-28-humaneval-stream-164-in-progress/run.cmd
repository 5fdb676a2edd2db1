2026-11-28T11:20:11Z start at a023ad0
2026-11-28T11:36:07Z stopped (SIGTERM) at the session's end; a snapshot is committed in the repository
