2026-11-29T05:36:44Z start bank at dd7c44d with 0 done
2026-11-29T06:41:50Z exit 0
