"""`reflexion serve`: a read-only web page for run folders and their memories (Starlette, plain
HTML, no JavaScript build). `app.make_app` builds it; `reflexion.cli.serve` runs it."""
