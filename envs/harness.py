"""The program `run_checks` runs in the sandbox: it loads the candidate's code once, as a module
named `solution`, then runs each check in its own copy of that namespace, under its own SIGALRM
time limit, with its prints captured, and reports one JSON line per check. It runs under
whatever Python the sandbox has, so it uses only the standard library.

What keeps the candidate from faking a result (it runs in the same process):
- the code, the checks and a per-run nonce arrive on stdin, so none is in the program text or
  in a module global; the harness runs in a private namespace, not `__main__`, with its own
  copy of the builtins and its own references to what it calls (`json.dumps`, `math.isclose`,
  `os.write`), so patching `__main__`, `builtins` or a module changes nothing it uses;
- results go to a private duplicate of stdout; fd 1 is /dev/null before the candidate loads, so
  whatever it prints, even to `sys.__stdout__`, is not read; each result starts with the nonce.
A determined candidate can still walk the frames or the garbage collector to the nonce: this
raises the bar, it is not a wall (the official tests' own `==` is the candidate's, too).

    >>> compile(PROGRAM, "main.py", "exec") is not None
    True
"""

HARNESS = r"""
import contextlib, io, json, linecache, math, os, signal, sys, traceback

dumps, loads, isclose, write = json.dumps, json.loads, math.isclose, os.write


class CheckTimeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise CheckTimeout


def start():
    # subtle: read everything before the candidate exists, then take stdin and stdout from it
    given = loads(sys.stdin.readline())
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    out = os.dup(1)
    os.dup2(null, 1)
    os.close(null)
    nonce = given["nonce"]

    def emit(**fields):
        write(out, (nonce + dumps(fields) + "\n").encode())

    return given, emit


def short(text, n=240):
    return text if len(text) <= n else text[: n - 20] + " ... " + text[-15:]


def describe(exc, limit):
    if isinstance(exc, CheckTimeout):
        return "timed out after %g s" % limit
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "solution.py"]
    where = "".join(traceback.format_list(frames[-3:]))
    last = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return short(where + last, 1500)


def timed(run, limit):
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def same(got, want, approx):
    numbers = (int, float)
    if approx and isinstance(got, numbers) and isinstance(want, numbers):
        if not isinstance(got, bool) and not isinstance(want, bool):
            return isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    if approx and type(got) is type(want) and isinstance(got, (list, tuple)):
        return len(got) == len(want) and all(same(g, w, approx) for g, w in zip(got, want))
    return bool(got == want)


def run_check(check, scope, limit):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        timed(lambda: exec(compile(check["setup"], "<setup>", "exec"), scope), limit)
        if check["expected"] is None:
            timed(lambda: exec(compile(check["source"], "<check>", "exec"), scope), limit)
            return {"passed": True}
        got = timed(lambda: eval(compile(check["source"], "<check>", "eval"), scope), limit)
        try:
            want = timed(lambda: eval(compile(check["expected"], "<want>", "eval"), scope), limit)
        except Exception:
            # an expected output that is not an expression: compare it as printed text
            text = check["expected"].strip()
            shown = printed.getvalue().strip() if got is None else repr(got)
            return {"passed": text in (shown, str(got)), "got": short(shown)}
        passed = timed(lambda: same(got, want, check["approx"]), limit)
    return {"passed": passed, "got": short(repr(got))}


def load(code, limit):
    linecache.cache["solution.py"] = (len(code), None, code.splitlines(True), "solution.py")
    solution = type(sys)("solution")
    solution.__dict__["__builtins__"] = sys.modules["builtins"]  # theirs, not our copy
    sys.modules["solution"] = solution
    with contextlib.redirect_stdout(io.StringIO()):
        timed(lambda: exec(compile(code, "solution.py", "exec"), solution.__dict__), limit)
    return solution.__dict__


def main():
    given, emit = start()
    limit = given["limit"]
    signal.signal(signal.SIGALRM, on_alarm)
    try:
        namespace = load(given["code"], limit)
    except BaseException as exc:
        emit(load_error=describe(exc, limit))
        return
    emit(loaded=True)
    for index, check in enumerate(given["checks"]):
        try:
            outcome = run_check(check, dict(namespace), limit)
        except BaseException as exc:
            outcome = {"passed": False, "error": describe(exc, limit)}
        emit(index=index, **outcome)


main()
"""

# The script the sandbox runs: the harness, in a namespace of its own with its own builtins.
PROGRAM = (
    f"exec(compile({HARNESS!r}, '<harness>', 'exec'), "
    "{'__name__': '<harness>', '__builtins__': dict(__builtins__.__dict__)})\n"
)
