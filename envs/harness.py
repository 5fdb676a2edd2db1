"""The program `run_checks` runs in the sandbox: it loads the candidate's code once, then runs each
check in its own copy of the namespace, under its own SIGALRM time limit, with its prints
captured, and reports one JSON line per check (after a per-run nonce, so the candidate's own
prints cannot pass for a result). It runs under whatever Python the sandbox has, so it uses only
the standard library. `__NONCE__`, `__CODE__`, `__CHECKS__` and `__LIMIT__` are replaced by
Python literals before it runs.

    >>> compile(HARNESS, "harness", "exec") is not None
    True
"""

HARNESS = r"""
import builtins, contextlib, io, json, linecache, math, signal, sys, traceback

NONCE = __NONCE__
CODE = __CODE__
CHECKS = json.loads(__CHECKS__)
LIMIT = __LIMIT__
OUT = sys.stdout


class CheckTimeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise CheckTimeout


def emit(**fields):
    OUT.write(NONCE + json.dumps(fields) + "\n")
    OUT.flush()


def short(text, n=240):
    return text if len(text) <= n else text[: n - 20] + " ... " + text[-15:]


def describe(exc):
    if isinstance(exc, CheckTimeout):
        return "timed out after %g s" % LIMIT
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "solution.py"]
    where = "".join(traceback.format_list(frames[-3:]))
    last = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return short(where + last, 1500)


def timed(run):
    signal.setitimer(signal.ITIMER_REAL, LIMIT)
    try:
        return run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def same(got, want, approx):
    numbers = (int, float)
    if approx and isinstance(got, numbers) and isinstance(want, numbers):
        if not isinstance(got, bool) and not isinstance(want, bool):
            return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    if approx and type(got) is type(want) and isinstance(got, (list, tuple)):
        return len(got) == len(want) and all(same(g, w, approx) for g, w in zip(got, want))
    return bool(got == want)


def run_check(check, scope):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        timed(lambda: exec(compile(check["setup"], "<setup>", "exec"), scope))
        if check["expected"] is None:
            timed(lambda: exec(compile(check["source"], "<check>", "exec"), scope))
            return {"passed": True}
        got = timed(lambda: eval(compile(check["source"], "<check>", "eval"), scope))
        try:
            want = timed(lambda: eval(compile(check["expected"], "<expected>", "eval"), scope))
        except Exception:
            # an expected output that is not an expression: compare it as printed text
            text = check["expected"].strip()
            shown = printed.getvalue().strip() if got is None else repr(got)
            return {"passed": text in (shown, str(got)), "got": short(shown)}
        passed = timed(lambda: same(got, want, check["approx"]))
    return {"passed": passed, "got": short(repr(got))}


signal.signal(signal.SIGALRM, on_alarm)
linecache.cache["solution.py"] = (len(CODE), None, CODE.splitlines(True), "solution.py")
namespace = {"__name__": "solution", "__builtins__": builtins}
try:
    with contextlib.redirect_stdout(io.StringIO()):
        timed(lambda: exec(compile(CODE, "solution.py", "exec"), namespace))
except BaseException as exc:
    emit(load_error=describe(exc))
    raise SystemExit(0)
emit(loaded=True)
for index, check in enumerate(CHECKS):
    try:
        outcome = run_check(check, dict(namespace))
    except BaseException as exc:
        outcome = {"passed": False, "error": describe(exc)}
    emit(index=index, **outcome)
"""
