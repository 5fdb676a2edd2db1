"""The web app: Starlette routes over a `Site`, plain HTML, read-only unless --allow-edit.

    >>> app = make_app(Site.from_paths([Path("runs")]))     # doctest: +SKIP
    >>> uvicorn.run(app, host="127.0.0.1", port=8765)       # doctest: +SKIP

Unknown runs, tasks and lessons get a 404 page that says what was not found. Forgetting a lesson
takes two steps: a page that asks, then a POST that carries the server's token (so that another
site's page cannot make a browser forget) and a reason, kept in the lesson's history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from reflexion.web.attempts import task_page
from reflexion.web.index import SORTS, runs_page
from reflexion.web.layout import ICON, link, page, tag, url
from reflexion.web.memories import Filters, forget_lesson, lesson_page, memory_page
from reflexion.web.runs import PLOTS, not_found_page, run_page
from reflexion.web.search import search_page
from reflexion.web.side_by_side import diff_page
from reflexion.web.site import NotFound, Site

EDIT_OFF = "This page is read-only: start `reflexion serve` with --allow-edit to forget lessons."


LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


def make_app(site: Site, hosts: Sequence[str] = LOCAL_HOSTS) -> Starlette:
    """The app; a request naming another host than `hosts` is refused (a page of another site
    that rebinds its name to this machine's address gets a 400, not the forget form)."""
    pages = Pages(site)
    routes = [
        Route("/", pages.index),
        Route("/favicon.ico", favicon),
        Route("/diff", pages.diff),
        Route("/runs/{run}", pages.run),
        Route("/runs/{run}/plots/{file}", pages.plot),
        Route("/runs/{run}/tasks/{task:path}", pages.task),
        Route("/runs/{run}/memory", pages.memory),
        Route("/runs/{run}/search", pages.search),
        Route("/runs/{run}/memory/{rid}", pages.lesson),
        Route("/runs/{run}/memory/{rid}/forget", pages.forget, methods=["GET", "POST"]),
    ]
    handlers: dict[Any, Any] = {NotFound: _not_found, HTTPException: _http_error}
    guard = Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))
    return Starlette(routes=routes, exception_handlers=handlers, middleware=[guard])


class Pages:
    """One method per route (Starlette runs the plain ones in a thread)."""

    def __init__(self, site: Site) -> None:
        self.site = site

    def index(self, request: Request) -> Response:
        sort = request.query_params.get("sort", "date")
        if sort not in SORTS:
            msg = f"sort must be one of {', '.join(SORTS)}, got {sort[:40]!r}"
            raise NotFound(msg)
        desc = request.query_params.get("desc", "1" if SORTS[sort][2] else "0") == "1"
        return HTMLResponse(runs_page(self.site, sort, desc))

    def diff(self, request: Request) -> Response:
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        self.site.run(a), self.site.run(b)  # an unknown run: a 404 naming it
        html, status = diff_page(self.site, a, b)
        return HTMLResponse(html, status_code=status)

    def run(self, request: Request) -> Response:
        verdict = request.query_params.get("verdict", "")
        strategy = request.query_params.get("strategy", "")
        return HTMLResponse(run_page(self.site, _at(request, "run"), verdict, strategy))

    def plot(self, request: Request) -> Response:
        name, file = _at(request, "run"), _at(request, "file")
        path = self.site.run(name) / file
        if file not in PLOTS or not path.is_file():
            msg = f"run {name!r} has no plot {file!r}"
            raise NotFound(msg)
        return FileResponse(path, media_type="image/png")

    def task(self, request: Request) -> Response:
        seed = request.query_params.get("seed", "0")
        if not re.fullmatch(r"-?[0-9]{1,9}", seed):
            msg = f"seed must be a whole number, got {seed[:40]!r}"
            raise NotFound(msg)
        name, task_id = _at(request, "run"), _at(request, "task")
        show = request.query_params.getlist("show")
        return HTMLResponse(task_page(self.site, name, task_id, int(seed), show))

    def memory(self, request: Request) -> Response:
        filters = _filters(request)
        forgot = request.query_params.get("forgot", "")
        note = f"Forgot lesson {forgot}; it stays in its history." if forgot else ""
        return HTMLResponse(memory_page(self.site, _at(request, "run"), filters, note))

    def search(self, request: Request) -> Response:
        """The hits of the memory page's search, which the page fetches once it is shown."""
        return HTMLResponse(search_page(self.site, _at(request, "run"), _filters(request)))

    def lesson(self, request: Request) -> Response:
        return HTMLResponse(lesson_page(self.site, _at(request, "run"), _at(request, "rid")))

    async def forget(self, request: Request) -> Response:
        """GET: the page that asks; POST (with the token): forget, then back to the memory."""
        site, name, rid = self.site, _at(request, "run"), _at(request, "rid")
        site.run(name)
        if not site.allow_edit:
            return HTMLResponse(page("Read-only", tag("p", EDIT_OFF)), status_code=403)
        if request.method == "GET":
            return HTMLResponse(_confirm(site, name, rid))
        body = (await request.body()).decode("utf-8", errors="replace")
        form = {k: v[0] for k, v in parse_qs(body).items()}
        if form.get("token") != site.token:
            return HTMLResponse(page("Refused", tag("p", "This form is stale.")), status_code=403)
        forgotten = await run_in_threadpool(forget_lesson, site, name, rid, form.get("why", ""))
        if not forgotten:
            msg = f"no lesson {rid!r} stored in the memory of run {name!r}"
            raise NotFound(msg)
        return RedirectResponse(url("runs", name, "memory", forgot=rid), status_code=303)


def favicon(request: Request) -> Response:
    """The tab's icon (browsers ask for /favicon.ico whatever the page names)."""
    return Response(ICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


def _filters(request: Request) -> Filters:
    given = {k: request.query_params.get(k, "").strip() for k in ("kind", "strategy", "task")}
    return Filters(**given, query=request.query_params.get("q", "").strip())


def _at(request: Request, key: str) -> str:
    return str(request.path_params[key])


def _confirm(site: Site, name: str, rid: str) -> str:
    lesson_url = url("runs", name, "memory", rid)
    form = tag(
        "form",
        tag("input", type="hidden", name="token", value=site.token),
        tag("label", "Why (kept in its history): ", tag("input", name="why", size="50")),
        tag("br"),
        tag("button", "Yes, forget it", type="submit", id="confirm"),
        action=url("runs", name, "memory", rid, "forget"),
        method="post",
    )
    question = tag("p", "Forget lesson ", link(lesson_url, rid), f" of run {name}?")
    note = "It is removed from the store, so no later recall returns it; its history keeps it."
    return page(f"Forget {rid}?", question, tag("p", note), form, tag("p", link(lesson_url, "No")))


async def _not_found(request: Request, exc: Exception) -> Response:
    return HTMLResponse(not_found_page(str(exc)), status_code=404)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return HTMLResponse(not_found_page(f"nothing at {request.url.path}"), status_code=404)
    title = f"{exc.status_code}: {exc.detail}"
    return HTMLResponse(page(title, tag("p", link("/", "All runs"))), status_code=exc.status_code)


def serve(site: Site, host: str, port: int) -> None:
    import uvicorn

    hosts = [*LOCAL_HOSTS, host, f"[{host}]"]
    uvicorn.run(make_app(site, hosts), host=host, port=port, log_level="warning")
