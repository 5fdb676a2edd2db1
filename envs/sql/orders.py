"""The shop's orders, drawn from a seed over the stores, staff, customers and products already
made: who ordered what, where, when; how it was paid; what came back.

    >>> import random
    >>> day(dt.date(2024, 1, 30), dt.date(2024, 2, 2), random.Random(1))
    datetime.date(2024, 1, 31)
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

Row = tuple[Any, ...]
START, END = dt.date(2023, 1, 1), dt.date(2024, 12, 31)  # the orders' span
STORE_WEIGHTS = {1: 5, 2: 4, 3: 6, 4: 3, 5: 6, 6: 7, 7: 4, 8: 4}


def day(start: dt.date, end: dt.date, rng: random.Random) -> dt.date:
    """A day drawn evenly from `start` to `end`, both included."""
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def make_orders(rng: random.Random, rows: dict[str, list[Row]], count: int) -> dict[str, list[Row]]:
    """`count` orders with their lines, payments and returns."""
    made: dict[str, list[Row]] = {"orders": [], "order_lines": [], "payments": [], "returns": []}
    likes = {
        c[0]: 0.0 if rng.random() < 0.1 else rng.lognormvariate(0, 0.8) for c in rows["customers"]
    }
    hits = {p[0]: rng.paretovariate(2.0) * (0.7 if p[5] == 0 else 1.0) for p in rows["products"]}
    for product_id in rng.sample(sorted(hits), 6):
        hits[product_id] = 0.0  # never sold
    for order_id, when in enumerate(_times(rng, count), start=1):
        customer = _customer(rng, rows["customers"], likes, when)
        store, staff = _store_and_staff(rng, rows, when.date())
        lines = _lines(rng, rows["products"], hits, order_id, when.date())
        subtotal = sum(line[3] * line[4] for line in lines)
        shipping = 0 if store is not None or subtotal >= 25000 else rng.choice([599, 999, 1499])
        status = _status(rng, when.date())
        stamp = when.strftime("%Y-%m-%d %H:%M:%S")
        made["orders"].append((order_id, customer, store, staff, stamp, status, shipping))
        made["order_lines"] += lines
        if status != 4 and not (status == 1 and rng.random() < 0.4):
            made["payments"] += _payments(rng, order_id, when, subtotal + shipping, store)
        if status == 3:
            made["returns"] += _returns(rng, lines, when.date())
    made["payments"] = [(i, *p) for i, p in enumerate(made["payments"], start=1)]
    made["returns"] = [(i, *r) for i, r in enumerate(made["returns"], start=1)]
    return made


def _times(rng: random.Random, count: int) -> list[dt.datetime]:
    """When each order was placed, in time order: busier towards the end of each year."""
    months = [(year, month) for year in (2023, 2024) for month in range(1, 13)]
    weights = [1.0 + 0.02 * i + {11: 0.5, 12: 0.8}.get(m, 0.0) for i, (_, m) in enumerate(months)]
    times = []
    for year, month in rng.choices(months, weights=weights, k=count):
        first = dt.date(year, month, 1)
        last = (first + dt.timedelta(days=31)).replace(day=1) - dt.timedelta(days=1)
        seconds = rng.randint(8 * 3600, 22 * 3600 - 1)
        midnight = dt.datetime.combine(day(first, last, rng), dt.time())
        times.append(midnight + dt.timedelta(seconds=seconds))
    return sorted(times)


def _customer(
    rng: random.Random, customers: list[Row], likes: dict[int, float], when: dt.datetime
) -> int:
    stamp = when.strftime("%Y-%m-%d %H:%M:%S")
    able = [c for c in customers if c[5] <= stamp[:10] and (c[6] is None or c[6] > stamp)]
    return int(rng.choices([c[0] for c in able], weights=[likes[c[0]] for c in able])[0])


def _store_and_staff(
    rng: random.Random, rows: dict[str, list[Row]], date: dt.date
) -> tuple[int | None, int | None]:
    """A web order has neither; a store order was taken by someone working there that day."""
    if rng.random() < 0.35:
        return None, None
    today = str(date)
    stores = [s[0] for s in rows["stores"] if s[4] <= today and (s[5] is None or s[5] > today)]
    store = rng.choices(stores, weights=[STORE_WEIGHTS[s] for s in stores])[0]
    there = [
        s
        for s in rows["staff"]
        if s[1] == store and s[4] != "stock" and s[5] <= today and (s[6] is None or s[6] > today)
    ]
    if not there:
        there = [s for s in rows["staff"] if s[1] == store and s[4] == "manager"]
    staff = rng.choices(there, weights=[5 if s[4] == "sales" else 1 for s in there])[0]
    return store, staff[0]


def _lines(
    rng: random.Random, products: list[Row], hits: dict[int, float], order_id: int, date: dt.date
) -> list[Row]:
    able = [p for p in products if p[6] <= str(date)]
    wanted = rng.choices([1, 2, 3, 4], weights=[50, 28, 14, 8])[0]
    chosen: list[Row] = []
    while len(chosen) < min(wanted, len(able)):
        product = rng.choices(able, weights=[hits[p[0]] for p in able])[0]
        if product not in chosen:
            chosen.append(product)
    lines = []
    for line_no, product in enumerate(chosen, start=1):
        quantity = rng.choices([1, 2, 3, 4, 5], weights=[70, 20, 5, 3, 2])[0]
        price = product[3]
        if date.year == 2023 and rng.random() < 0.3:
            price = round(price * 0.95)  # list prices have gone up since
        if rng.random() < 0.15:
            price = round(price * rng.choice([0.9, 0.8]))  # a discount on this order
        lines.append((order_id, line_no, product[0], quantity, price))
    return lines


def _status(rng: random.Random, date: dt.date) -> int:
    """1 placed, 2 shipped, 3 delivered, 4 cancelled: recent orders are still on their way."""
    if rng.random() < 0.06:
        return 4
    age = (END - date).days
    if age < 10:
        return rng.choice([1, 1, 2])
    if age < 25:
        return rng.choice([2, 3])
    return 2 if rng.random() < 0.01 else 3


def _payments(
    rng: random.Random, order_id: int, when: dt.datetime, total: int, store: int | None
) -> list[Row]:
    paid = when + dt.timedelta(minutes=rng.randint(0, 45))
    stamp = paid.strftime("%Y-%m-%d %H:%M:%S")
    if rng.random() < 0.08 and total > 2000:
        gift = min(total - 500, rng.choice([1000, 2500, 5000]))
        return [(order_id, stamp, 3, gift), (order_id, stamp, 1, total - gift)]
    weights = [60, 30, 10] if store is None else [85, 0, 15]
    return [(order_id, stamp, rng.choices([1, 2, 3], weights=weights)[0], total)]


def _returns(rng: random.Random, lines: list[Row], date: dt.date) -> list[Row]:
    back = []
    for order_id, line_no, _, quantity, price in lines:
        returned = date + dt.timedelta(days=rng.randint(3, 40))
        if rng.random() >= 0.06 or returned > END:
            continue
        count = rng.randint(1, quantity)
        reason = rng.choices([1, 2, 3], weights=[30, 20, 50])[0]
        refund = count * price if reason != 3 else round(count * price * 0.9)
        back.append((order_id, line_no, str(returned), count, reason, refund))
    return back
