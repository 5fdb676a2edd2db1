"""The shop's schema, as the model sees it: CREATE TABLE statements whose comments are the only
place that says how a column is coded (status codes, cents, soft deletes, the fiscal year).

    >>> TABLES[:3]
    ('stores', 'staff', 'customers')
    >>> "4 = cancelled" in DDL
    True
    >>> literal("O'Hara"), literal(None), literal(4999)
    ("'O''Hara'", 'NULL', '4999')
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

DDL = """\
CREATE TABLE stores (
  store_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT NOT NULL,
  region TEXT NOT NULL,            -- 'North', 'South', 'East' or 'West'
  opened_on TEXT NOT NULL,         -- 'YYYY-MM-DD'
  closed_on TEXT                   -- NULL while the store is open
);
CREATE TABLE staff (
  staff_id INTEGER PRIMARY KEY,
  store_id INTEGER NOT NULL REFERENCES stores,
  manager_id INTEGER REFERENCES staff,  -- their manager; NULL for a store's manager
  full_name TEXT NOT NULL,
  role TEXT NOT NULL,              -- 'manager', 'sales' or 'stock'
  hired_on TEXT NOT NULL,
  left_on TEXT                     -- NULL while still employed
);
CREATE TABLE customers (
  customer_id INTEGER PRIMARY KEY,
  full_name TEXT NOT NULL,
  email TEXT,                      -- NULL if not given
  city TEXT NOT NULL,
  tier INTEGER NOT NULL,           -- loyalty tier: 0 = none, 1 = silver, 2 = gold
  signed_up_on TEXT NOT NULL,
  deleted_at TEXT                  -- set when the account was closed (the row is kept)
);
CREATE TABLE categories (
  category_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  parent_id INTEGER REFERENCES categories  -- NULL for a top-level category
);
CREATE TABLE products (
  product_id INTEGER PRIMARY KEY,
  sku TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  price_cents INTEGER NOT NULL,    -- current list price, in cents
  cost_cents INTEGER NOT NULL,     -- what one unit costs the shop, in cents
  is_active INTEGER NOT NULL,      -- 1 = on sale, 0 = discontinued (the row is kept)
  added_on TEXT NOT NULL
);
CREATE TABLE product_categories (  -- a product is in one or more categories
  product_id INTEGER NOT NULL REFERENCES products,
  category_id INTEGER NOT NULL REFERENCES categories,
  PRIMARY KEY (product_id, category_id)
);
CREATE TABLE orders (
  order_id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers,
  store_id INTEGER REFERENCES stores,  -- NULL for a web order
  staff_id INTEGER REFERENCES staff,   -- who took it; NULL for a web order
  ordered_at TEXT NOT NULL,  -- 'YYYY-MM-DD HH:MM:SS'; fiscal year FYn runs 1 Feb n-1 to 31 Jan n
  status INTEGER NOT NULL,         -- 1 = placed, 2 = shipped, 3 = delivered, 4 = cancelled
  shipping_cents INTEGER NOT NULL  -- shipping charged, in cents
);
CREATE TABLE order_lines (
  order_id INTEGER NOT NULL REFERENCES orders,
  line_no INTEGER NOT NULL,        -- 1, 2, ... within the order
  product_id INTEGER NOT NULL REFERENCES products,
  quantity INTEGER NOT NULL,
  unit_price_cents INTEGER NOT NULL,  -- price per unit charged on this order, in cents
  PRIMARY KEY (order_id, line_no)
);
CREATE TABLE payments (
  payment_id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders,  -- an order may be paid in several payments
  paid_at TEXT NOT NULL,           -- 'YYYY-MM-DD HH:MM:SS'
  method INTEGER NOT NULL,         -- 1 = card, 2 = PayPal, 3 = gift card
  amount_cents INTEGER NOT NULL
);
CREATE TABLE returns (
  return_id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL,
  line_no INTEGER NOT NULL,        -- with order_id, the order line returned
  returned_on TEXT NOT NULL,       -- 'YYYY-MM-DD'
  quantity INTEGER NOT NULL,
  reason INTEGER NOT NULL,         -- 1 = damaged, 2 = wrong item, 3 = changed mind
  refund_cents INTEGER NOT NULL,
  FOREIGN KEY (order_id, line_no) REFERENCES order_lines
);
"""

TABLES = tuple(re.findall(r"^CREATE TABLE (\w+)", DDL, flags=re.MULTILINE))


def statements() -> list[str]:
    """Each CREATE TABLE statement alone, with its comments, in the order of TABLES."""
    return [part.strip() + "\n);" for part in DDL.split("\n);") if part.strip()]


def render(path: Path, samples: int = 3) -> str:
    """Each CREATE TABLE statement followed by its first `samples` rows, as SQL literals."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        parts = []
        for table, statement in zip(TABLES, statements(), strict=True):
            rows = conn.execute(f"SELECT * FROM {table} LIMIT {samples}").fetchall()
            shown = "\n".join("(" + ", ".join(map(literal, row)) + ")" for row in rows)
            parts.append(f"{statement}\n/* first {len(rows)} rows:\n{shown}\n*/")
        return "\n".join(parts)
    finally:
        conn.close()


def literal(value: object) -> str:
    """A value as SQL writes it."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)
