public import Logging
public import PostgresNIO

/// The relay's cursor for tests and benchmarks that write events without running the event-publisher.
public enum OutboxCursor {
    /// Moves the cursor past every event written so far, as the relay's publication of them would (a no-op when
    /// it is already there).
    public static func publishEverything(client: PostgresClient, logger: Logger) async throws {
        try await client.query(
            """
            INSERT INTO outbox_publications (through_xid, through_id, events)
            SELECT writer_xid, id, 0 FROM outbox ORDER BY writer_xid DESC, id DESC LIMIT 1
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }
}
