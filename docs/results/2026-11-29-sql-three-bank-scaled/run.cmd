2026-11-29T03:10:34Z start bank-scaled at 4ffd726 with 0 done
2026-11-29T04:10:07Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
2026-11-29T04:18:54Z resumed in place after a first snapshot at 74 (the release check ran between)
2026-11-29T04:18:54Z start bank-scaled at 4ffd726 with 74 done
2026-11-29T04:40:13Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
2026-11-29T04:50:30Z resumed in a new session
2026-11-29T04:50:30Z start bank-scaled at 4ffd726 with 100 done
2026-11-29T05:36:26Z exit 0
