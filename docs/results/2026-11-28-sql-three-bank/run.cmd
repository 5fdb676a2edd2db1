2026-11-28T22:19:21Z start bank at 9d97eef with 0 done
2026-11-28T23:04:30Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
2026-11-28T23:05:58Z start bank at 9d97eef with 66 done
2026-11-28T23:16:22Z the previous session ended while it ran (67 done); resumed in place in a new session
2026-11-28T23:16:22Z start bank at 9d97eef with 67 done
2026-11-29T00:16:41Z exit 0
