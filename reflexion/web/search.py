"""The memory page's search: the lessons most similar to a text, among those the page's filters
admit, on a page of its own that the memory page fetches once it is shown (the first search in
a server loads the embedding model, seconds that must not hold back the page).

    >>> html = search_page(site, "main", Filters(query="off by one"))    # doctest: +SKIP
    >>> "Most similar to" in html                                          # doctest: +SKIP
    True
"""

from __future__ import annotations

from memory.backend import DEFAULT_EMBEDDER
from reflexion.core.errors import StoreError, UsageError
from reflexion.web.layout import page, tag, url
from reflexion.web.memories import Filters, _hits, check_kind, chosen_sources
from reflexion.web.site import Site


def search_page(site: Site, name: str, filters: Filters) -> str:
    """The lessons most similar to `filters.query` among those the filters admit, in a section
    the memory page fetches once the page is shown (the first search in a server loads the
    embedding model, seconds that must not hold back the page)."""
    check_kind(filters)
    crumbs = [(url("runs", name), name), (url("runs", name, "memory"), "memory")]
    embedder = str(site.config(name).get("embedder") or "") or DEFAULT_EMBEDDER
    if not filters.query:
        return page(f"Search the memory of {name}", tag("p", "Nothing to search for."))
    try:
        with chosen_sources(site, name, filters) as (stores, chosen):
            hits = _hits(name, stores, filters.query, embedder, chosen)
    except (UsageError, StoreError) as exc:
        hits = [tag("p", str(exc), cls="note")]
    return page(f"Search the memory of {name}", tag("section", *hits, id="hits"), crumbs=crumbs)
