2026-11-28T17:03:46Z start insights --episodes 3 at 2c44a88
2026-11-28T17:31:50Z stopped (SIGTERM) at the session's end; the snapshot in the repository holds this folder
