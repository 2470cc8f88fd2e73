"""Generate data/clickstream.csv: a realistic, seeded clickstream for the lessons.

    python data/generate_clickstream.py            # writes data/clickstream.csv (seed 2026)

Columns: ``user, page, event_time, arrival_time, partition`` (times in epoch milliseconds,
UTC). What it contains, by design:

* 6 users clicking for 10 minutes from 2026-01-05 09:00:00 UTC, a few seconds apart;
* network delay: every click arrives 50–1,500 ms after it happened, so arrival order differs
  from event-time order (out of order);
* 3% of clicks are *late*: they arrive 20–60 s after they happened (a phone that was offline);
* two partitions (Kafka-style): users u1–u3 write to partition 0, u4–u6 to partition 1;
  partition 1 goes *idle* after minute 6 — its users stop — which stalls any job whose
  watermark is the minimum over partitions (lesson 07's "my window never fires").

The same seed always writes the same file; ``tests/test_datasets.py`` checks the committed
file equals a fresh generation.
"""

from __future__ import annotations

import csv
import random
import sys
from pathlib import Path

START = 1_767_603_600_000  # 2026-01-05T09:00:00Z
DURATION = 10 * 60_000
IDLE_AFTER = 6 * 60_000
USERS = ["u1", "u2", "u3", "u4", "u5", "u6"]
PAGES = ["home", "search", "product", "cart", "checkout"]
COLUMNS = ["user", "page", "event_time", "arrival_time", "partition"]


def generate(seed: int = 2026) -> list[dict[str, object]]:
    rnd = random.Random(seed)
    rows = []
    for number, user in enumerate(USERS):
        partition = 0 if number < 3 else 1
        t = START + rnd.randrange(0, 5_000)
        while t < START + DURATION:
            if partition == 1 and t >= START + IDLE_AFTER:
                break
            late = rnd.random() < 0.03
            delay = rnd.randrange(20_000, 60_000) if late else rnd.randrange(50, 1_500)
            rows.append({"user": user, "page": rnd.choice(PAGES), "event_time": t,
                         "arrival_time": t + delay, "partition": partition})
            t += rnd.randrange(2_000, 9_000)
    rows.sort(key=lambda r: (r["arrival_time"], r["user"]))
    return rows


def write(path: Path, rows: list[dict[str, object]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("clickstream.csv")
    write(target, generate())
    print(f"wrote {target}")
