import Foundation
public import Logging
import PipelineRecords
public import PostgresNIO

/// The DLQ as rows: every record of the rejected topic (its position, subject, app, reason and the record
/// itself), written by the entitlement-updater, read by the console, which replays through Kafka.
public struct DeadLetters: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// One DLQ record as the console shows it.
    public struct Row: Codable, Hashable, Sendable {
        public var position: String
        public var subject: String?
        public var environment: String?
        public var reason: String
        public var detail: String?
        public var notificationUUID: String?
        public var recordedAt: Date
        public var replayedAt: Date?
    }

    /// One record of the rejected topic as a row: where it was read, what it is about, why it was refused, and
    /// the record's JSON (the DLQ record, or `{"unparsed": …}` for a value that is not one).
    public struct Entry: Sendable {
        public var topic: String
        public var partition: Int32
        public var offset: Int64
        public var subject: String?
        public var environment: String?
        public var bundleId: String?
        public var reason: String
        public var detail: String?
        public var notificationUUID: String?
        public var json: String

        public init(
            topic: String, partition: Int32, offset: Int64, subject: String?, environment: String?, bundleId: String?,
            reason: String, detail: String?, notificationUUID: String?, json: String
        ) {
            self.topic = topic
            self.partition = partition
            self.offset = offset
            self.subject = subject
            self.environment = environment
            self.bundleId = bundleId
            self.reason = reason
            self.detail = detail
            self.notificationUUID = notificationUUID
            self.json = json
        }
    }

    /// Records a batch of the rejected topic (a record seen before changes nothing).
    public func record(_ entries: [Entry]) async throws {
        for entry in entries {
            try await self.client.query(
                """
                INSERT INTO dead_letters (topic, partition, "offset", subject, environment, bundle_id, reason, detail, notification_uuid, record)
                VALUES (\(entry.topic), \(entry.partition), \(entry.offset), \(entry.subject), \(entry.environment), \(entry.bundleId),
                        \(entry.reason), \(entry.detail), \(entry.notificationUUID), \(entry.json)::jsonb)
                ON CONFLICT (topic, partition, "offset") DO NOTHING
                """, logger: self.logger)
        }
    }

    /// The DLQ records of app `bundleId` about any of `subjects` (newest first, at most `limit`); a record of
    /// another app, or of none, is never listed.
    public func rows(bundleId: String, subjects: [String], limit: Int = 100) async throws -> [Row] {
        var rows: [Row] = []
        let query = try await self.client.query(
            Self.rowsQuery(bundleId: bundleId, subjects: subjects, limit: limit), logger: self.logger)
        for try await (position, subject, environment, reason, detail, uuid, recordedAt, replayedAt) in query.decode(
            (String, String?, String?, String, String?, String?, Date, Date?).self)
        {
            rows.append(
                Row(
                    position: position, subject: subject, environment: environment, reason: reason, detail: detail,
                    notificationUUID: uuid,
                    recordedAt: recordedAt, replayedAt: replayedAt))
        }
        return rows
    }

    /// The rejected record at a DLQ position (`topic/partition/offset`).
    public func rejected(at position: String) async throws -> RejectedNotificationRecord? {
        guard let (topic, partition, offset) = Self.parse(position) else { return nil }
        for try await text in try await self.client.query(
            """
            SELECT record::text FROM dead_letters WHERE topic = \(topic) AND partition = \(partition) AND "offset" = \(offset)
            """, logger: self.logger
        ).decode(String.self) {
            return try? JSONDecoder().decode(RejectedNotificationRecord.self, from: Data(text.utf8))
        }
        return nil
    }

    /// Notes that a record was sent back to its topic.
    public func markReplayed(_ position: String) async throws {
        guard let (topic, partition, offset) = Self.parse(position) else { return }
        try await self.client.query(
            """
            UPDATE dead_letters SET replayed_at = now() WHERE topic = \(topic) AND partition = \(partition) AND "offset" = \(offset)
            """, logger: self.logger)
    }

    /// A DLQ position `topic/partition/offset` (the topic may itself contain `/`), or nil.
    static func parse(_ position: String) -> (topic: String, partition: Int32, offset: Int64)? {
        let parts = position.split(separator: "/").map(String.init)
        guard parts.count >= 3, let partition = Int32(parts[parts.count - 2]),
            let offset = Int64(parts[parts.count - 1])
        else { return nil }
        return (parts.dropLast(2).joined(separator: "/"), partition, offset)
    }

    /// The dead letters about `subjects` in one app, newest first (the console's query; the scale benchmark
    /// prints its plan).
    public static func rowsQuery(bundleId: String, subjects: [String], limit: Int) -> PostgresQuery {
        """
        SELECT topic || '/' || partition || '/' || "offset", subject, environment, reason, detail, notification_uuid, recorded_at, replayed_at
        FROM dead_letters WHERE subject = ANY(\(subjects)) AND bundle_id = \(bundleId) ORDER BY recorded_at DESC LIMIT \(limit)
        """
    }
}
