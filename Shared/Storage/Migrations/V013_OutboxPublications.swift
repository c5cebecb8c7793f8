import Logging
import PostgresNIO

/// Version 13: the outbox is published up to a cursor instead of row by row. Marking each published row
/// (`published_at`) rewrote it and four of its indexes (no HOT update, since the column was indexed): two thirds of
/// the relay's database time. Now each row records the transaction that wrote it (`writer_xid`), and the relay reads
/// rows in (writer_xid, id) order only from transactions that have ended, so a row can never commit behind the cursor
/// (see ``OutboxRelay``); each batch it publishes appends one row to `outbox_publications`, whose newest row is the
/// cursor. The payload becomes `json`: the event's bytes as the updater wrote them, read back with no conversion
/// (`jsonb` had to be printed again for every read, half of the relay's select).
///
/// Rows published before this version were marked by `published_at`: the first cursor sits just before the oldest
/// unpublished one (rows after it that were published go out once more, with their event ids: at least once).
/// Status requests lose `published_at`, which nothing ever set (so they were never pruned): they are pruned by age
/// once their outbox event is published.
struct OutboxPublicationsMigration: SQLStatementsMigration {
    let version = 13
    let name = "outbox published up to a cursor"

    static let statements = [
        // Rows written before this version read 0 (all committed); new rows get their transaction's id.
        "ALTER TABLE outbox ADD COLUMN writer_xid xid8 NOT NULL DEFAULT '0'",
        "ALTER TABLE outbox ALTER COLUMN writer_xid SET DEFAULT pg_current_xact_id()",
        "ALTER TABLE outbox ALTER COLUMN payload TYPE json USING payload::json",
        """
        CREATE TABLE outbox_publications (
            through_xid xid8 NOT NULL,
            through_id bigint NOT NULL,
            events integer NOT NULL,
            published_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (through_xid, through_id)
        )
        """,
        """
        INSERT INTO outbox_publications (through_xid, through_id, events)
        SELECT '0', coalesce((SELECT min(id) - 1 FROM outbox WHERE published_at IS NULL), (SELECT max(id) FROM outbox), 0), 0
        """,
        "CREATE INDEX outbox_publication_order ON outbox (writer_xid, id)",
        "CREATE INDEX outbox_created ON outbox (created_at)",
        "DROP INDEX outbox_unpublished",
        "DROP INDEX outbox_published",
        "ALTER TABLE outbox DROP COLUMN published_at",
        "CREATE INDEX outbox_publications_published ON outbox_publications (published_at)",
        """
        CREATE VIEW outbox_pending AS
        SELECT * FROM outbox
        WHERE (writer_xid, id) > (
            SELECT * FROM ((SELECT through_xid, through_id FROM outbox_publications
                            ORDER BY through_xid DESC, through_id DESC LIMIT 1)
                           UNION ALL SELECT '0', 0) AS cursor
            ORDER BY 1 DESC, 2 DESC LIMIT 1)
        """,
        "DROP INDEX status_requests_unpublished",
        "DROP INDEX status_requests_published",
        "ALTER TABLE status_requests DROP COLUMN published_at",
        "CREATE INDEX status_requests_created ON status_requests (created_at)",
    ]
}
