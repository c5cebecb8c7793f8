import Logging
import PostgresNIO

/// Version 2: the notification log records whether a notification moved its subject forward, so the
/// stale guard compares only with notifications that changed state (a stale or unclear one does not).
struct SubjectOrdering: DatabaseMigration {
    let version = 2
    let name = "notification log: advances_subject"

    func apply(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "ALTER TABLE notification_log ADD COLUMN advances_subject boolean NOT NULL DEFAULT false", logger: logger)
        try await connection.query(
            "CREATE INDEX notification_log_subject_advancing ON notification_log (subject, signed_date) WHERE advances_subject",
            logger: logger)
    }
}
