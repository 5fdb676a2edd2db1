2026-11-28T08:06:38Z start at 22d2ba6
2026-11-28T08:11:30Z paused (SIGSTOP) for the release check
2026-11-28T08:19:15Z continued
2026-11-28T08:43:57Z stopped (SIGTERM) at the session's end; a snapshot is committed in the repository
2026-11-28T09:02:03Z resumed at 22d2ba6 (new session)
2026-11-28T11:00:29Z finished (100 trials)
