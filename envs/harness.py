"""The two programs `run_checks` runs, each in a sandbox of its own, joined by two pipes:

- SERVER loads the candidate's code and does what TESTER asks of it: call a function, read an
  attribute, take a length, iterate. It answers with values, never with verdicts.
- TESTER runs the checks (the expected values, the hidden tests) and decides each verdict. It
  never loads the candidate's code: a name the code defines is a `Handle` that forwards calls to
  SERVER.

Why two processes: code that runs in the process that decides the verdict can always reach it
(walk the frames or the garbage collector to the result writer, patch the comparison). Here the
candidate's process holds no test, no expected value and no way to report a pass; the worst it
can do is answer falsely or not at all, which fails the check.

Values cross the pipe by value only when they are plain built-in data: None, bool, int, float,
complex, str, bytes, and lists, tuples, dicts, sets and frozensets of them. An instance of a
subclass of one (a Counter, a namedtuple, an IntEnum, an int whose `__eq__` says yes to
everything) crosses as its plain content, read with the base type's own methods, and arrives as
the plain type. Anything else - a function, an instance of the code's own class, a generator -
stays in SERVER and crosses as a handle. TESTER compares with its own `==`: a plain value is
never equal to a handle, two handles cannot be compared (the code decides which object each
answer is), and `in` on a handle takes all of it first. So the code's own `__eq__` or
`__contains__` never sees an expected value. A list the code changed in place comes back
changed.

Both programs use only the standard library: they run under whatever Python the sandbox has.

    >>> [compile(p, "main.py", "exec") is not None for p in (SERVER, TESTER)]
    [True, True]
"""

# Shared by both programs: the wire format of a value, and a line-based channel over two fds.
CODEC = r"""
import io, json, os, select, time

MAX_LINE = 16 * 2**20  # one message; a longer line is garbage
MAX_DEPTH = 100
MAX_PRINTED = 2**20  # what a call or a check may print that is kept


class Capped(io.StringIO):
    "Collects printed text up to MAX_PRINTED characters and drops the rest."

    def write(self, text):
        room = MAX_PRINTED - self.tell()
        if room > 0:
            super().write(text[:room])
        return len(text)


class Lost(Exception):
    "The other process closed the pipe: it ended."


class Garbled(Exception):
    "The other process sent something that is not a message."


def encode(value, handle, depth=0):
    "Plain data as itself; anything else as `handle(value)`."
    # A subclass of a plain type (Counter, namedtuple, an IntEnum) goes as its plain content,
    # read with the base type's own methods: the other side rebuilds the plain type.
    if value is None or isinstance(value, bool):
        return bool(value) if value is not None else None
    if isinstance(value, int):
        number = int.__int__(value)
        return number if -(2**53) < number < 2**53 else {"i": hex(number)}
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if depth > MAX_DEPTH:
        raise ValueError("a value nested more than %d deep" % MAX_DEPTH)
    inner = lambda items: [encode(v, handle, depth + 1) for v in items]
    if isinstance(value, list):
        return inner(list.__iter__(value))
    for kind, tag in ((tuple, "t"), (set, "s"), (frozenset, "f")):
        if isinstance(value, kind):
            return {tag: inner(kind.__iter__(value))}
    if isinstance(value, dict):
        return {"d": [inner(pair) for pair in dict.items(value)]}
    if isinstance(value, bytes):
        return {"b": bytes.hex(value)}
    if isinstance(value, complex):
        return {"c": [complex.real.__get__(value), complex.imag.__get__(value)]}
    return handle(value)


def decode(data, handle, depth=0):
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if depth > MAX_DEPTH + 1:
        raise Garbled("nested too deep")
    if kind is list:
        return [decode(v, handle, depth + 1) for v in data]
    if kind is not dict or len(data) != 1:
        raise Garbled("not a value: %.80r" % (data,))
    ((tag, body),) = data.items()
    if tag in ("t", "s", "f") and type(body) is list:
        items = [decode(v, handle, depth + 1) for v in body]
        return {"t": tuple, "s": set, "f": frozenset}[tag](items)
    if tag == "d" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
        return {decode(k, handle, depth + 1): decode(v, handle, depth + 1) for k, v in body}
    if tag == "i" and type(body) is str:
        return int(body, 16)
    if tag == "b" and type(body) is str:
        return bytes.fromhex(body)
    if tag == "c" and type(body) is list and len(body) == 2:
        return complex(*body)
    if tag == "h" and type(body) is list and len(body) == 2:
        return handle(body)
    raise Garbled("not a value: %.80r" % (data,))


class Channel:
    "Messages, one JSON object per line, read from one fd and written to another."

    def __init__(self, read_fd, write_fd):
        self.read_fd, self.write_fd = read_fd, write_fd
        self.buffer = bytearray()
        self.dumps, self.loads, self.write, self.read = json.dumps, json.loads, os.write, os.read
        self.select, self.clock = select.select, time.monotonic

    def send(self, message, wait=None):
        "Write one message; False when `wait` seconds pass first (the reader stopped reading)."
        deadline = None if wait is None else self.clock() + wait
        data = memoryview((self.dumps(message) + "\n").encode())
        while data:
            if deadline is not None:
                left = deadline - self.clock()
                if left <= 0 or not self.select([], [self.write_fd], [], left)[1]:
                    return False
            try:
                # a pipe that selects writable takes a 4 KiB write without blocking
                data = data[self.write(self.write_fd, data[:4096]):]
            except (BrokenPipeError, ConnectionResetError):
                raise Lost from None
        return True

    def receive(self, wait=None):
        "The next message; None when `wait` seconds pass first."
        deadline = None if wait is None else self.clock() + wait
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                try:
                    message = self.loads(line)
                except (ValueError, RecursionError):
                    raise Garbled("not JSON") from None
                if type(message) is not dict:
                    raise Garbled("not a message")
                return message
            if len(self.buffer) > MAX_LINE:
                raise Garbled("a message longer than %d bytes" % MAX_LINE)
            if deadline is not None:
                left = deadline - self.clock()
                if left <= 0 or not self.select([self.read_fd], [], [], left)[0]:
                    return None
            chunk = self.read(self.read_fd, 1 << 16)
            if not chunk:
                raise Lost
            self.buffer += chunk
"""

# The candidate's process. Its first stdin line: {"code", "limit", "read_fd", "write_fd"}.
SERVER = (
    CODEC
    + r"""
import contextlib, linecache, signal, sys, traceback


class CallTimeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise CallTimeout


def timed(run, limit):
    signal.setitimer(signal.ITIMER_REAL, max(limit, 0.001))
    try:
        return run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def describe(exc):
    "The exception with the code's last lines of traceback (not ours)."
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "solution.py"]
    where = "".join(traceback.format_list(frames[-3:]))
    last = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    text = where + last
    return text if len(text) <= 1500 else text[:1480] + " ... " + text[-15:]


class Objects:
    "What stays here and crosses as a handle: functions, the code's own objects, iterators."

    def __init__(self):
        self.by_id = {}

    def handle(self, value):
        key = id(value)
        self.by_id[key] = value  # kept alive: the tester may use it again
        return {"h": [key, type(value).__name__]}

    def find(self, body):
        if type(body[0]) is not int or body[0] not in self.by_id:
            raise ValueError("no such object")
        return self.by_id[body[0]]


def load(code, limit):
    linecache.cache["solution.py"] = (len(code), None, code.splitlines(True), "solution.py")
    solution = type(sys)("solution")
    sys.modules["solution"] = solution
    with contextlib.redirect_stdout(Capped()):
        timed(lambda: exec(compile(code, "solution.py", "exec"), solution.__dict__), limit)
    return solution.__dict__


def names(namespace, objects):
    found = {}
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue
        if type(value) is type(sys):
            found[name] = {"module": value.__name__}
        else:
            try:
                found[name] = {"value": encode(value, objects.handle)}
                if len(json.dumps(found[name])) > MAX_LINE // 16:
                    raise ValueError("large: it stays here")
            except (ValueError, RecursionError):  # too large or too deep: it stays here
                found[name] = {"value": objects.handle(value)}
    return found


OPERATIONS = {
    "call": lambda obj, args, kwargs: obj(*args, **kwargs),
    "getattr": lambda obj, name: getattr(obj, name),
    "len": len,
    "iter": iter,
    "next": next,
    "getitem": lambda obj, key: obj[key],
    "bool": bool,
    "repr": repr,
    "str": str,
}


def serve(request, objects):
    "One request, all of it under one time limit, with its prints captured."
    find, op = objects.find, request["op"]
    target = decode(request["target"], find)
    args = decode(request.get("args", []), find)
    kwargs = decode(request.get("kwargs", {"d": []}), find)
    answer = {"id": request["id"]}

    def work():
        if op == "call":
            value = target(*args, **kwargs)
            answer["changed"] = changed(request, args, kwargs, objects)
        else:
            value = OPERATIONS[op](target, *args)
        answer["value"] = encode(value, objects.handle)

    printed = Capped()
    try:
        with contextlib.redirect_stdout(printed):
            timed(work, request["limit"])
    except StopIteration as exc:
        if op == "next":
            answer["stop"] = True
        else:  # from a call, it is an error like any other (it must not end the tests' loops)
            answer.update(raised="StopIteration", error=describe(exc))
    except CallTimeout:
        answer["timeout"] = True
    except BaseException as exc:
        answer["raised"] = type(exc).__name__ if isinstance(exc, Exception) else "BaseException"
        answer["error"] = describe(exc)
    answer["printed"] = printed.getvalue()
    return answer


def changed(request, args, kwargs, objects):
    "The arguments the call changed in place (a list it sorted), as they are now."
    found = []
    named = request.get("kwargs", {"d": []})["d"]
    for where, (sent, now) in [*enumerate(zip(request["args"], args)),
                               *((k, (s, kwargs[k])) for (k, s) in named)]:
        if type(now) in (list, dict, set):
            after = encode(now, objects.handle)
            if after != sent:
                found.append([where, after])
    return found


def reply(channel, answer):
    "Send an answer; one too large to read becomes an error the checks can show."
    line = json.dumps(answer)
    if len(line) >= MAX_LINE:
        answer = {"id": answer.get("id"), "raised": "ValueError", "printed": "",
                  "error": "ValueError: the answer is too large to check (%d MiB; at most %d)"
                           % (len(line) >> 20, MAX_LINE >> 20)}
    channel.send(answer)


def main():
    given = json.loads(sys.stdin.readline())
    channel = Channel(given["read_fd"], given["write_fd"])
    signal.signal(signal.SIGALRM, on_alarm)
    objects = Objects()
    try:
        try:
            namespace = load(given["code"], given["limit"])
            reply(channel, {"loaded": names(namespace, objects)})
        except CallTimeout:
            channel.send({"load_error": "timed out after %g s" % given["limit"]})
            return
        except (Lost, Garbled):
            return
        except BaseException as exc:
            channel.send({"load_error": describe(exc)})
            return
        while True:
            request = channel.receive()
            try:
                answer = serve(request, objects)
            except (KeyError, TypeError, ValueError, Garbled) as exc:
                answer = {"id": request.get("id"), "raised": "Exception", "error": repr(exc)}
            reply(channel, answer)
    except (Lost, Garbled):
        return  # the checks are done, or sent garbage: nothing more to do


main()
"""
)

# The checking process. Its first stdin line: {"checks", "limit", "grace", "helpers",
# "entry_points", "read_fd", "write_fd"}; it writes one JSON line per event to its stdout.
TESTER = (
    CODEC
    + r"""
import builtins, contextlib, importlib, math, signal, sys, traceback

# never taken from the code's answers: only a `next` answer ends an iteration here
NOT_MAPPED = ("StopIteration", "StopAsyncIteration", "GeneratorExit")


class CheckTimeout(BaseException):
    pass


class CodeError(Exception):
    "An exception the code raised that is not one of Python's own."


class Unavailable(BaseException):
    "The code's process ended, hung or garbled its answers: no check can run any more."


def on_alarm(signum, frame):
    raise CheckTimeout


class Server:
    "The candidate's process, seen from here."

    def __init__(self, channel, grace):
        self.channel, self.grace = channel, grace
        self.handles = {}
        self.down = None  # why it can no longer answer: "lost", "hung" or "garbled"
        self.asked = 0  # requests made so far; also the next request's id

    def handle(self, body):
        key = (body[0], str(body[1]))
        if key not in self.handles:
            self.handles[key] = Handle(self, body)
        return self.handles[key]

    def ask(self, op, target, args=(), kwargs=None):
        if self.down is not None:
            raise Unavailable(self.down)
        key = self.asked
        self.asked += 1
        try:
            request = {"id": key, "op": op, "target": target,
                       "args": encode(list(args), self.sent)}
            if kwargs is not None:
                request["kwargs"] = encode(dict(kwargs), self.sent)
        except RecursionError:
            raise ValueError("an argument nested too deep to pass to the code") from None
        # subtle: our timer is paused while we talk, so it cannot cut a message in half. The
        # code's process gets what time we had left, and its own timer answers by then; an
        # answer that has not come `grace` seconds later will not come.
        left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        request["limit"] = left or self.grace
        deadline = time.monotonic() + request["limit"]
        try:
            answer = self.exchange(request, request["limit"] + self.grace)
        finally:
            if left:
                signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 1e-4))
        sys.stdout.write(str(answer.get("printed", "")))
        if op == "call":
            self.update(args, kwargs or {}, answer.get("changed", []))
        return self.outcome(op, answer)

    def exchange(self, request, wait):
        "Send the request and wait up to `wait` seconds for its answer."
        deadline = time.monotonic() + wait
        try:
            if not self.channel.send(request, wait):
                self.down = "hung"
                raise CheckTimeout
            while True:
                message = self.channel.receive(max(deadline - time.monotonic(), 0))
                if message is None:
                    self.down = "hung"
                    raise CheckTimeout
                if message.get("id") == request["id"]:
                    return message
        except Lost:
            self.down = "lost"
            raise Unavailable("lost") from None
        except Garbled:
            self.down = "garbled"
            raise Unavailable("garbled") from None

    def outcome(self, op, answer):
        if answer.get("timeout"):
            raise CheckTimeout
        if answer.get("stop"):
            if op == "next":
                raise StopIteration
            answer = {"raised": "StopIteration", "error": "StopIteration"}
        if "raised" in answer:
            raise self.rebuilt(str(answer["raised"]), str(answer.get("error", "")))
        if "value" not in answer:
            self.down = "garbled"
            raise Unavailable("garbled")
        try:
            return decode(answer["value"], self.handle)
        except (Garbled, ValueError, RecursionError):
            self.down = "garbled"
            raise Unavailable("garbled") from None

    def rebuilt(self, name, text):
        "The code's exception, as one of Python's own types when it is one (`except ValueError`)."
        kind = getattr(builtins, name, None) if name not in NOT_MAPPED else None
        exc_type = kind if isinstance(kind, type) and issubclass(kind, Exception) else CodeError
        for base in exc_type.__mro__:  # UnicodeDecodeError wants five arguments: UnicodeError
            try:
                exc = base(text)
                break
            except Exception:
                continue
        exc.from_code = text
        return exc

    def sent(self, value):
        if isinstance(value, Handle):
            return {"h": object.__getattribute__(value, "_body")}
        raise TypeError("cannot pass a %s to the code: only plain data and the code's own "
                        "objects can cross" % type(value).__name__)

    def update(self, args, kwargs, changes):
        for where, data in changes:
            target = kwargs.get(where) if type(where) is str else args[where]
            now = decode(data, self.handle)
            if type(target) is list and type(now) is list:
                target[:] = now
            elif type(target) in (dict, set) and type(now) is type(target):
                target.clear()
                target.update(now)


class Handle:
    "A function or object that lives in the code's process. Equal only to itself."

    __slots__ = ("_server", "_body")

    def __init__(self, server, body):
        object.__setattr__(self, "_server", server)
        object.__setattr__(self, "_body", body)

    def _ask(self, op, *args, kwargs=None):
        get = object.__getattribute__
        return get(self, "_server").ask(op, {"h": get(self, "_body")}, args, kwargs)

    def __call__(self, *args, **kwargs):
        return self._ask("call", *args, kwargs=kwargs)

    def __getattr__(self, name):
        return self._ask("getattr", name)

    def __setattr__(self, name, value):
        raise AttributeError("cannot set attributes on an object of the code")

    def __len__(self):
        return self._ask("len")

    def __iter__(self):
        return self._ask("iter")

    def __next__(self):
        return self._ask("next")

    def __getitem__(self, key):
        return self._ask("getitem", key)

    def __contains__(self, item):
        # all of it first, then our own `==`: iterating until a match would tell the code,
        # one `next` at a time, what the test looks for
        return item in list(iter(self))

    def __bool__(self):
        return self._ask("bool")

    def __repr__(self):
        return self._ask("repr")

    def __str__(self):
        return self._ask("str")

    def __eq__(self, other):
        # a plain value is never equal to one; two of the code's objects cannot be compared
        # here, since the code chooses which object each answer is
        if isinstance(other, Handle):
            raise TypeError("two objects of the code cannot be compared: compare plain values")
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = object.__hash__


def type_name(value):
    return str(object.__getattribute__(value, "_body")[1])


def short(text, n=240):
    return text if len(text) <= n else text[: n - 20] + " ... " + text[-15:]


def describe(exc, limit):
    if isinstance(exc, CheckTimeout):
        return "timed out after %g s" % limit
    text = getattr(exc, "from_code", None)
    if text is not None:
        return short(text, 1500)
    return short("".join(traceback.format_exception_only(type(exc), exc)).strip(), 1500)


def timed(run, limit):
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def same(got, want, approx):
    numbers = (int, float)
    if approx and type(got) in numbers and type(want) in numbers:
        return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    if approx and type(got) is type(want) and type(got) in (list, tuple):
        return len(got) == len(want) and all(same(g, w, approx) for g, w in zip(got, want))
    return bool(got == want)


def shown(got):
    text = repr(got)
    if isinstance(got, Handle):
        text += " (of type %s: not plain data, so compared by identity)" % type_name(got)
    return short(text)


def run_check(check, scope, server):
    printed = Capped()
    with contextlib.redirect_stdout(printed):
        exec(compile(check["setup"], "<setup>", "exec"), scope)
        if check["expected"] is None:
            exec(compile(check["source"], "<check>", "exec"), scope)
            return {"passed": True}
        got = eval(compile(check["source"], "<check>", "eval"), scope)
        asked = server.asked
        try:
            want = eval(compile(check["expected"], "<want>", "eval"), scope)
        except (SyntaxError, NameError) as exc:
            if isinstance(exc, NameError) and server.asked != asked:
                raise  # the code's own answer, not a sign that this is text
            # an expected output that is not an expression: compare it as printed text
            text = check["expected"].strip()
            said = printed.getvalue().strip() if got is None else repr(got)
            return {"passed": text in (said, str(got)), "got": short(said)}
        if holds_handle(want):
            kind = type_name(want) if isinstance(want, Handle) else "its own type"
            raise TypeError("the expected value is an object of the code (%s), which it could "
                            "make equal to anything: compare plain values instead" % kind)
        return {"passed": same(got, want, check["approx"]), "got": shown(got)}


def holds_handle(value, depth=0):
    if isinstance(value, Handle):
        return True
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return any(holds_handle(k, depth + 1) or holds_handle(v, depth + 1)
                   for k, v in dict.items(value))
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(holds_handle(v, depth + 1) for v in value)
    return False


def namespace(loaded, server, helpers, entry_points):
    "The names the code defined, as the checks see them."
    found = {"__name__": "checks"}
    for name, entry in loaded.items():
        if name in entry_points and not name.startswith("__"):
            pass  # what the task asks for is the code's, even when named like a builtin
        elif name.startswith("__") or name in builtins.__dict__:
            continue  # the checks keep Python's own `isinstance`, `abs`, `__builtins__`, ...
        if "module" in entry:
            module = str(entry["module"])
            # only a standard module under its own name: `math` cannot stand for another one
            if module.split(".")[0] in sys.stdlib_module_names and module.split(".")[-1] == name:
                found[name] = importlib.import_module(module)
        elif name in sys.stdlib_module_names and name not in entry_points:
            continue  # nor can an object of the code
        else:
            found[name] = decode(entry["value"], server.handle)
    exec(compile(helpers, "<helpers>", "exec"), found)  # the task's own: they win
    return found


def main():
    given = json.loads(sys.stdin.readline())
    null = os.open(os.devnull, os.O_RDWR)
    out = os.dup(1)
    os.dup2(null, 1)  # what the tests print is not an event
    emit = lambda **fields: os.write(out, (json.dumps(fields) + "\n").encode())
    limit, grace = given["limit"], given["grace"]
    server = Server(Channel(given["read_fd"], given["write_fd"]), grace)
    try:
        first = server.channel.receive(limit + grace)
    except (Lost, Garbled) as exc:
        emit(load_lost=type(exc).__name__)
        return
    if first is None:
        emit(load_error="timed out after %g s" % limit)
        return
    if "loaded" not in first:
        emit(load_error=str(first.get("load_error", "the code's process sent no names")))
        return
    signal.signal(signal.SIGALRM, on_alarm)
    try:
        loaded, helpers, entry_points = first["loaded"], given["helpers"], given["entry_points"]
        base = timed(lambda: namespace(loaded, server, helpers, entry_points), limit)
    except BaseException as exc:
        emit(load_error="the checks could not start: " + describe(exc, limit))
        return
    emit(loaded=True)
    for index, check in enumerate(given["checks"]):
        if server.down is not None:
            emit(index=index, passed=False, down=server.down)
            continue
        try:
            outcome = timed(lambda: run_check(check, dict(base), server), limit)
        except Unavailable:
            outcome = {"passed": False, "down": server.down}
        except BaseException as exc:
            outcome = {"passed": False, "error": describe(exc, limit)}
        emit(index=index, **outcome)


main()
"""
)
