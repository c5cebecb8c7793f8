import Logging
import PostgresNIO

/// Version 11: the indexes pruning walks (``Pruning``), so each bounded batch reads only what it removes: published
/// outbox rows and status requests by when they were published, dead letters by when they were recorded, log
/// entries by when they were applied.
struct PruningIndexesMigration: SQLStatementsMigration {
    let version = 11
    let name = "indexes for pruning"

    static let statements = [
        "CREATE INDEX outbox_published ON outbox (published_at) WHERE published_at IS NOT NULL",
        "CREATE INDEX status_requests_published ON status_requests (published_at) WHERE published_at IS NOT NULL",
        "CREATE INDEX dead_letters_recorded ON dead_letters (recorded_at)",
        "CREATE INDEX notification_log_applied ON notification_log (applied_at)",
    ]
}
