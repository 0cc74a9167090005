//! `--init-demo`: writes a small, deterministic shop database (customers, products, orders,
//! order_items with foreign keys, two indexes and a view; 54 rows) for trying the server out.
//! It is built in a temporary file beside the target and renamed into place, so a failure never
//! leaves a half-written database behind.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};

use crate::db::DbError;

const SCHEMA: &str = "
CREATE TABLE customers (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    email      TEXT NOT NULL UNIQUE,
    country    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE products (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    category    TEXT NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
    in_stock    INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE orders (
    id          INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    ordered_at  TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'paid', 'shipped', 'cancelled'))
);
CREATE TABLE order_items (
    order_id         INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    product_id       INTEGER NOT NULL REFERENCES products(id),
    quantity         INTEGER NOT NULL CHECK (quantity > 0),
    unit_price_cents INTEGER NOT NULL,
    PRIMARY KEY (order_id, product_id)
);
CREATE INDEX idx_orders_customer ON orders(customer_id);
CREATE INDEX idx_order_items_product ON order_items(product_id);
CREATE VIEW order_totals AS
    SELECT o.id AS order_id, c.name AS customer, o.status,
           SUM(i.quantity * i.unit_price_cents) AS total_cents
    FROM orders o
    JOIN customers c ON c.id = o.customer_id
    JOIN order_items i ON i.order_id = o.id
    GROUP BY o.id;
";

const CUSTOMERS: [(&str, &str, &str); 8] = [
    ("Ada Lovelace", "ada@example.com", "GB"),
    ("Grace Hopper", "grace@example.com", "US"),
    ("Alan Turing", "alan@example.com", "GB"),
    ("Edsger Dijkstra", "edsger@example.com", "NL"),
    ("Barbara Liskov", "barbara@example.com", "US"),
    ("Donald Knuth", "don@example.com", "US"),
    ("Margaret Hamilton", "margaret@example.com", "US"),
    ("Niklaus Wirth", "niklaus@example.com", "CH"),
];

const PRODUCTS: [(&str, &str, i64); 10] = [
    ("Mechanical keyboard", "hardware", 12900),
    ("Trackball", "hardware", 7900),
    ("27\" monitor", "hardware", 32900),
    ("USB-C hub", "hardware", 4500),
    ("Rust in Action", "books", 4999),
    ("The Art of Computer Programming", "books", 19999),
    ("SICP", "books", 5500),
    ("Editor license", "software", 9900),
    ("Cloud credits", "software", 2500),
    ("Rubber duck", "accessories", 900),
];

const STATUSES: [&str; 4] = ["pending", "paid", "shipped", "cancelled"];
const ORDERS: i64 = 12;

/// How many rows of each table the demo holds, for the message `--init-demo` prints.
pub struct DemoSummary {
    pub path: PathBuf,
    pub rows: Vec<(&'static str, i64)>,
}

/// Creates the demo database at `path`; an existing file is an error unless `force`.
pub fn create(path: &Path, force: bool) -> Result<DemoSummary, DbError> {
    if path.exists() && !force {
        return Err(DbError::Exists {
            path: path.to_path_buf(),
        });
    }
    let fail = |reason: String| DbError::Create {
        path: path.to_path_buf(),
        reason,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| fail(e.to_string()))?;
    }
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp_name);
    // A leftover from a crashed run would otherwise be appended to.
    let _ = std::fs::remove_file(&tmp);
    let built = build(&tmp).map_err(|e| fail(e.to_string()));
    let rows = match built {
        Ok(rows) => rows,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e.to_string())
    })?;
    Ok(DemoSummary {
        path: path.to_path_buf(),
        rows,
    })
}

fn build(path: &Path) -> rusqlite::Result<Vec<(&'static str, i64)>> {
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA)?;
    for (i, (name, email, country)) in CUSTOMERS.iter().enumerate() {
        let created = format!("2023-{:02}-{:02}", i % 12 + 1, i * 3 % 28 + 1);
        tx.execute(
            "INSERT INTO customers (id, name, email, country, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![i as i64 + 1, name, email, country, created],
        )?;
    }
    for (i, (name, category, price)) in PRODUCTS.iter().enumerate() {
        tx.execute(
            "INSERT INTO products (id, name, category, price_cents, in_stock) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![i as i64 + 1, name, category, price, i64::from(i % 4 != 3)],
        )?;
    }
    let customers = CUSTOMERS.len() as i64;
    let products = PRODUCTS.len() as i64;
    for order in 1..=ORDERS {
        let status = STATUSES[(order % 4) as usize];
        tx.execute(
            "INSERT INTO orders (id, customer_id, ordered_at, status) VALUES (?1, ?2, ?3, ?4)",
            params![
                order,
                order * 5 % customers + 1,
                format!("2024-{:02}-{:02}", order % 6 + 1, order * 2 + 1),
                status
            ],
        )?;
        // Steps of 7 modulo 10 give distinct products within an order (the primary key).
        for k in 0..(1 + order % 3) {
            let product = (order * 3 + k * 7) % products + 1;
            tx.execute(
                "INSERT INTO order_items (order_id, product_id, quantity, unit_price_cents) \
                 SELECT ?1, id, ?2, price_cents FROM products WHERE id = ?3",
                params![order, 1 + (order + k) % 3, product],
            )?;
        }
    }
    tx.commit()?;
    let mut rows = Vec::new();
    for table in ["customers", "products", "orders", "order_items"] {
        let n = conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
        rows.push((table, n));
    }
    Ok(rows)
}
