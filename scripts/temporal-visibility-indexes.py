"""Leaner visibility indexes for the embedded Temporal dev server's SQLite file (scripts/lib.sh runs
this after every start; idempotent).

The dev server's `executions_visibility` table carries 45 indexes, one per column a list query could
filter on. Every workflow start, close and search-attribute upsert rewrites its row in all of them,
which was about two fifths of the dev server's CPU in the webhooks bench. This keeps the indexes
that the Temporal UI's lists and this service's queries use (namespace order, workflow id, type,
status, execution time, task queue, parent and root workflow, and the Keyword and Datetime columns
that the service's search attributes map to) and drops the others. A query on a dropped column
still answers the same rows, only by reading the namespace's rows instead of an index.

Usage: temporal-visibility-indexes.py <temporal.db>
"""
import sqlite3
import sys

KEEP = {
    "default_idx",
    "by_execution_time",
    "by_workflow_id",
    "by_workflow_type",
    "by_status",
    "by_task_queue",
    "by_parent_workflow_id",
    "by_root_workflow_id",
    # AccountId, CustomerId, SubscriptionStatus (Keyword) and NextBillingDate (Datetime) take the
    # first free columns of their type; the rest stay indexed for attributes an operator adds.
    *(f"by_keyword_{i:02d}" for i in range(1, 11)),
    *(f"by_datetime_{i:02d}" for i in range(1, 4)),
}


def main(path: str) -> None:
    db = sqlite3.connect(path, timeout=60)
    names = [
        name
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL"
        )
    ]
    dropped = [name for name in names if name not in KEEP]
    for name in dropped:
        db.execute(f'DROP INDEX IF EXISTS "{name}"')
    db.commit()
    db.close()
    if dropped:
        print(f"visibility indexes: dropped {len(dropped)}, kept {len(names) - len(dropped)}")


if __name__ == "__main__":
    main(sys.argv[1])
