2026-11-28T20:23:24Z start self-refine-sampled at fac08fe with 0 done
2026-11-28T20:33:14Z start self-refine-sampled at fac08fe with 2 done
2026-11-28T22:09:31Z exit 0
