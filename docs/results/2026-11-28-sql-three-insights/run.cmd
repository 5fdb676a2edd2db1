2026-11-28T17:03:46Z start insights --episodes 3 at 2c44a88
2026-11-28T17:31:50Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
2026-11-28T17:33:12Z resumed at 2c44a88 after the snapshot at 31
2026-11-28T17:44:00Z the 17:33 resume was ended with the session (no question added; still 31)
2026-11-28T17:44:08Z resumed at 2c44a88 with 31 done
2026-11-28T18:55:35Z paused (SIGSTOP) for the release check (.ci/run from a fresh clone at 4c187d3)
2026-11-28T19:03:00Z resumed (SIGCONT); the release check failed on a module-size test, to be rerun
2026-11-28T19:03:28Z paused (SIGSTOP) for the release check (.ci/run from a fresh clone at fac08fe)
2026-11-28T19:11:47Z resumed (SIGCONT) after the release check
2026-11-28T20:11:41Z stopped (SIGTERM) near the session's end, with 152 done; the snapshot in the repository holds this folder
2026-11-28T20:14:37Z resumed at 2c44a88 with 152 done
2026-11-28T20:21:37Z exit 0
2026-11-28T20:22:08Z finished: 159 of 159; the folder is kept beside the page
