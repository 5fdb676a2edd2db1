2026-11-28T22:19:21Z start bank at 9d97eef with 0 done
2026-11-28T23:04:30Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
