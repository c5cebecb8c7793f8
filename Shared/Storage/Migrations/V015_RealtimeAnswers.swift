import Logging
import PostgresNIO

/// Version 15: the answers retention-messaging gave to Apple's real-time requests, shared by its replicas
/// (``RealtimeAnswers``). A request identifier seen by any replica within the replay window gets the answer it got
/// the first time, with no second `retention.offered` event and no new offer signature. Rows live minutes: each
/// replica deletes those older than the window. `answer` is null while the first answer is being made.
struct RealtimeAnswersMigration: SQLStatementsMigration {
    let version = 15
    let name = "real-time answers shared by retention-messaging's replicas"

    static let statements = [
        """
        CREATE TABLE realtime_answers (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            request_identifier text NOT NULL,
            first_seen_at timestamptz NOT NULL,
            answer bytea,
            PRIMARY KEY (environment, bundle_id, request_identifier)
        )
        """,
        "CREATE INDEX realtime_answers_first_seen ON realtime_answers (first_seen_at)",
    ]
}
