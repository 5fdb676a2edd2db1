2026-11-28T06:22:09Z start self-refine at 67a742b
2026-11-28T06:25:03Z stopped by hand (SIGTERM) to give the cores to issue 30's Game of 24 stream; resume with chain-sql.sh
2026-11-28T13:30:49Z start self-refine at 67a742b
2026-11-28T13:35:26Z paused (SIGSTOP) for a release check
2026-11-28T13:52:53Z resumed (SIGCONT) after the release check
2026-11-28T14:10:01Z paused (SIGSTOP) for a release check
2026-11-28T14:17:52Z resumed (SIGCONT) after the release check
2026-11-28T14:35:46Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
2026-11-28T14:52:48Z start self-refine at 67a742b
2026-11-28T14:54:23Z chain-sql.sh killed (its bash only; the run goes on as pid 30112); after-sr.sh waits for it, then runs proactive
2026-11-28T16:18:24Z ended; results.jsonl holds 159 rows
