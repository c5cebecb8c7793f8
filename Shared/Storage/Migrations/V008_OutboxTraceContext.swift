import Logging
import PostgresNIO

/// Version 8: the W3C trace context of each outbox row (the updater's span), so the published event continues the
/// notification's trace. NULL when tracing is off.
struct OutboxTraceContextMigration: SQLStatementsMigration {
    let version = 8
    let name = "outbox trace context"

    static let statements = [
        "ALTER TABLE outbox ADD COLUMN trace_parent text"
    ]
}
