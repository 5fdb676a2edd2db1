"""The shop's data, made by our own code from a seed (no downloads): two calendar years of
orders, 2023 and 2024, with their lines, payments and returns.

    >>> shop = make_rows(7)
    >>> len(shop["stores"]), shop == make_rows(7)
    (8, True)

`database(seed)` writes them once into a cache file named by a hash of the schema, this code and
the seed, and returns its path; a missing file is rebuilt.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import random
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from envs.sql.orders import END, day, make_orders
from envs.sql.schema import DDL, TABLES

Row = tuple[Any, ...]


def words(text: str) -> list[str]:
    """The words of `text`: long lists of names read better as one string."""
    return text.split()


FIRST = words(
    "Ava Ben Chloe Dan Ella Finn Grace Hugo Isla Jack Kara Liam Maya Noah Olive Paul Quinn Rosa "
    "Sam Tara Umar Vera Will Xena Yusuf Zoe Aria Caleb Dina Eli Fay Gus Hana Ivan Jade Kofi Lena "
    "Milo Nina Omar"
)
LAST = words(
    "Adams Baker Chen Diaz Evans Fischer Garcia Hill Ito Jones Khan Lopez Moore Nguyen Okafor "
    "Park Quinn Rossi Silva Tanaka Usman Vogel Walsh Young Zhang Brooks Cruz Dubois Ferrari Gray "
    "Hughes Ivanov Jensen Kim Larsen Mendes Novak Ortiz Patel Reyes"
)
CITIES = words(
    "Seattle Portland Chicago Minneapolis Boston New_York Austin Miami Denver Atlanta Phoenix "
    "Detroit"
)
STORES: list[Row] = [
    (1, "Harbor Point", "Seattle", "West", "2018-04-14", None),
    (2, "Riverside", "Portland", "West", "2019-09-02", None),
    (3, "Lakeview", "Chicago", "North", "2017-06-20", None),
    (4, "Maple Court", "Minneapolis", "North", "2020-03-11", "2024-06-30"),
    (5, "Old Town", "Boston", "East", "2016-10-05", None),
    (6, "Union Square", "New York", "East", "2021-05-17", None),
    (7, "Magnolia", "Austin", "South", "2019-02-23", None),
    (8, "Palmetto", "Miami", "South", "2023-09-01", None),
]
# leaf categories: (id, name, parent, price range in dollars, product nouns)
TOPS: list[Row] = [(1, "Electronics"), (2, "Home"), (3, "Outdoor"), (4, "Clothing")]
LEAVES: list[Row] = [
    (5, "Audio", 1, (25, 400), "Headphones Speaker Earbuds Soundbar Turntable Microphone"),
    (6, "Computers", 1, (150, 2200), "Laptop Monitor Keyboard Tablet Router Webcam"),
    (7, "Phones", 1, (90, 1300), "Phone Charger Case Smartwatch Powerbank Stand"),
    (8, "Kitchen", 2, (12, 450), "Kettle Blender Skillet Toaster Knife_Set Grinder"),
    (9, "Furniture", 2, (60, 1500), "Desk Chair Bookshelf Sofa Stool Cabinet"),
    (10, "Lighting", 2, (15, 300), "Lamp Lantern Pendant Nightlight Floodlight Bulb_Pack"),
    (11, "Camping", 3, (20, 600), "Tent Sleeping_Bag Backpack Stove Hammock Cooler"),
    (12, "Garden", 3, (8, 350), "Hose Shears Planter Rake Sprinkler Wheelbarrow"),
    (13, "Men", 4, (15, 250), "Jacket Shirt Boots Jeans Sweater Cap"),
    (14, "Women", 4, (15, 260), "Coat Blouse Sneakers Dress Scarf Cardigan"),
]
TAGS: list[Row] = [(15, "Gifts"), (16, "Eco")]  # top-level categories a product may also be in
CODE = ("build.py", "orders.py")  # the cache file's name changes with the code that made it
BRANDS = words("Nova Aero Terra Luma Orbit Pike Vela Cobalt Alder Brisk Summit Kestrel")


def database(seed: int, folder: Path | None = None) -> Path:
    """The path of the shop built from `seed`, built now if it is not there yet: in `folder`,
    else in ~/.cache/reflexion/sql, else (a home we may not write) in the temp directory."""
    code = b"".join((Path(__file__).parent / name).read_bytes() for name in CODE)
    name = hashlib.sha256(code + DDL.encode() + str(seed).encode()).hexdigest()[:16] + ".sqlite"
    places = [folder] if folder else [Path.home() / ".cache" / "reflexion" / "sql"]
    places.append(Path(tempfile.gettempdir()) / "reflexion-sql")
    for where in places[:-1]:
        try:
            return _built(seed, where / name)
        except OSError:
            continue
    return _built(seed, places[-1] / name)


def _built(seed: int, path: Path) -> Path:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=path.parent, suffix=".partial")
        os.close(handle)
        write(make_rows(seed), Path(partial))
        os.replace(partial, path)  # subtle: atomic, so two processes building at once agree
    return path


def write(rows: dict[str, list[Row]], path: Path) -> None:
    """Create the schema in a fresh file at `path` and insert `rows`, table by table."""
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as conn:
        conn.executescript(DDL)
        for table in TABLES:
            if rows[table]:
                marks = ",".join("?" * len(rows[table][0]))
                conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
    conn.close()


def make_rows(seed: int) -> dict[str, list[Row]]:
    """Every table's rows, drawn from `seed`: the same seed gives the same rows."""
    rng = random.Random(seed)
    rows: dict[str, list[Row]] = {"stores": list(STORES)}
    rows["staff"] = _staff(rng)
    rows["customers"] = _customers(rng, 400)
    rows["categories"] = [(*t, None) for t in TOPS] + [leaf[:3] for leaf in LEAVES]
    rows["categories"] += [(*t, None) for t in TAGS]
    rows["products"], rows["product_categories"] = _products(rng)
    rows.update(make_orders(rng, rows, 1200))
    return rows


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _staff(rng: random.Random) -> list[Row]:
    staff: list[Row] = []
    for store_id, _, _, _, opened, closed in STORES:
        first_day = dt.date.fromisoformat(opened)
        manager = len(staff) + 1
        staff.append((manager, store_id, None, _name(rng), "manager", opened, closed))
        for role in ["sales"] * rng.randint(3, 5) + ["stock"] * rng.randint(1, 2):
            hired = day(first_day, dt.date(2024, 6, 1), rng)
            left = closed
            if left is None and rng.random() < 0.2:
                left = day(hired + dt.timedelta(days=60), END, rng).isoformat()
            staff.append((len(staff) + 1, store_id, manager, _name(rng), role, str(hired), left))
    return staff


def _customers(rng: random.Random, count: int) -> list[Row]:
    customers: list[Row] = []
    for customer_id in range(1, count + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        email = None if rng.random() < 0.1 else f"{first}.{last}{customer_id}@example.com"
        city = rng.choices(CITIES, weights=[9, 6, 8, 4, 7, 9, 5, 5, 4, 3, 2, 2])[0]
        tier = rng.choices([0, 1, 2], weights=[60, 28, 12])[0]
        joined = day(dt.date(2021, 1, 1), dt.date(2024, 11, 30), rng)
        deleted = None
        if rng.random() < 0.08:
            gone = day(joined + dt.timedelta(days=30), END, rng)
            deleted = f"{gone} {rng.randint(8, 22):02d}:{rng.randint(0, 59):02d}:00"
        name = f"{first} {last}"
        row = (customer_id, name, email and email.lower(), city.replace("_", " "), tier)
        customers.append((*row, str(joined), deleted))
    return customers


def _products(rng: random.Random) -> tuple[list[Row], list[Row]]:
    products: list[Row] = []
    links: list[Row] = []
    for category_id, _, parent, (low, high), nouns in LEAVES:
        names = [f"{b} {n.replace('_', ' ')}" for b in BRANDS for n in nouns.split()]
        for name in sorted(rng.sample(names, 12)):
            product_id = len(products) + 1
            price = rng.randint(low * 100, high * 100) // 100 * 100 - rng.choice([1, 5, 51])
            cost = int(price * rng.uniform(0.45, 0.75))
            active = 0 if rng.random() < 0.15 else 1
            added = day(dt.date(2021, 6, 1), dt.date(2024, 12, 20), rng)
            sku = f"{name[:3].upper()}-{product_id:04d}"
            products.append((product_id, sku, name, price, cost, active, str(added)))
            links.append((product_id, category_id))
            if rng.random() < 0.1:
                near = [leaf[0] for leaf in LEAVES if leaf[2] == parent and leaf[0] != category_id]
                other = rng.choice(near)  # a sibling: a lantern is for camping and lighting
                links.append((product_id, other))
            for tag_id, _ in TAGS:
                if rng.random() < 0.2:
                    links.append((product_id, tag_id))
    return products, sorted(links)
