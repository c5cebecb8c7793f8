import Logging
import PostgresNIO

/// Version 16: every event is numbered among its subject's events (`sequence`, one more than the subject's event
/// before it, in the order the updater wrote them), so a consumer can order a subject's events and see a gap.
/// `event_sequences` holds each subject's last number (the updater bumps it in the statement that writes the events,
/// under the subject's lock); `outbox.sequence` keeps each event's. Subjects number from 1 from this version on:
/// events written before carry no sequence.
struct EventSequencesMigration: SQLStatementsMigration {
    let version = 16
    let name = "events numbered per subject"

    static let statements = [
        """
        CREATE TABLE event_sequences (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            subject text NOT NULL,
            last_sequence bigint NOT NULL,
            PRIMARY KEY (environment, bundle_id, subject)
        )
        """,
        "ALTER TABLE outbox ADD COLUMN sequence bigint",
    ]
}
