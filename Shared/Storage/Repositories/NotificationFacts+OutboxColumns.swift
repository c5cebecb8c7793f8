import EntitlementDecisions
import PostgresNIO

extension NotificationFacts {
    /// A wave's outbox events as the facts statement reads them: one binary `text[]` per column, the events in row
    /// order (their position is the arrays' ordinality). PostgreSQL reads each element as it is, so a payload is not
    /// escaped into a JSON string, lexed and unescaped out of it, nor walked character by character to splice its
    /// number in: it travels without its opening `{` (``payloadTails``), which the statement writes back, with
    /// `"sequence":N,` after it when the event is numbered.
    struct OutboxColumns {
        /// The columns in the order the statement binds them (`$2` onwards), as its `unnest(…) AS e(…)` names them.
        static let names = [
            "id", "topic", "key", "payload_tail", "environment", "bundle_id", "trace_parent", "subject",
        ]

        var ids: [String] = []
        var topics: [String] = []
        var keys: [String] = []
        /// Each payload after its first byte, the `{` that opens every event's JSON object.
        var payloadTails: [String] = []
        var environments: [String] = []
        var bundleIds: [String] = []
        /// The trace context, or the empty string for none (the statement reads it as NULL).
        var traceParents: [String] = []
        /// The subject whose events are numbered, or the empty string for a row that is not numbered (NULL).
        var subjects: [String] = []

        /// The events of `rows`, in order.
        init(_ rows: [WavePlan.FactsRow]) throws {
            for row in rows {
                for event in row.events { try self.append(event) }
            }
        }

        /// Adds one event; its payload must be a JSON object, as every event's is.
        mutating func append(_ event: OutboxEvent) throws {
            guard event.payload.utf8.first == UInt8(ascii: "{") else {
                throw StorageError("the outbox event \(event.id)'s payload is not a JSON object")
            }
            self.ids.append(event.id)
            self.topics.append(event.topic)
            self.keys.append(event.key)
            self.payloadTails.append(String(decoding: event.payload.utf8.dropFirst(), as: UTF8.self))
            self.environments.append(event.environment)
            self.bundleIds.append(event.bundleId)
            self.traceParents.append(event.traceParent ?? "")
            self.subjects.append(event.subject ?? "")
        }

        /// Binds the columns in ``names``' order.
        func append(to bindings: inout PostgresBindings) {
            for column in self.columns { bindings.append(column) }
        }

        /// The columns in ``names``' order.
        var columns: [[String]] {
            [
                self.ids, self.topics, self.keys, self.payloadTails, self.environments, self.bundleIds,
                self.traceParents, self.subjects,
            ]
        }
    }
}
