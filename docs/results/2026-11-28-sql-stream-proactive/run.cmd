2026-11-28T16:18:24Z start proactive at 2c44a88
2026-11-28T16:25:22Z paused (SIGSTOP) for a release check
2026-11-28T16:33:18Z resumed (SIGCONT) after the release check
2026-11-28T17:03:43Z exit 0
