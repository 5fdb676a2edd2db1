"""The programs the sandboxed processes run (copied into each sandbox, standard library only)."""
