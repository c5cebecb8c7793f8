public import Foundation
public import Logging
public import PostgresNIO

/// The answers retention-messaging gave to Apple's real-time requests, by (environment, app, `requestIdentifier`),
/// shared by its replicas: a request is answered once whichever replica it reaches, and its repeats get that answer.
/// A request is reserved by the statement that reads its subscription (``RetentionFacts``), its answer written after
/// (``record(_:seenAt:)``), and rows are kept for minutes (``prune(before:)``); the table holds no entitlement state.
public struct RealtimeAnswers: Sendable {
    /// What the store says about a request.
    public enum Reservation: Sendable, Equatable {
        /// Never seen: it is now reserved for the caller, who answers it and then ``record(_:seenAt:)``.
        case new
        /// Answered before (by any replica): its answer.
        case answered(Data)
        /// Reserved by another caller whose answer is not recorded yet.
        case inFlight

        /// The reservation a statement reports: whether it reserved the request, else the answer it found (none: the
        /// first caller is still answering, or committed after the statement began).
        init(reserved: Bool, answer: ByteBuffer?) {
            if reserved {
                self = .new
            } else if let answer {
                self = .answered(Data(answer.readableBytesView))
            } else {
                self = .inFlight
            }
        }
    }

    /// A request's identity in the store.
    public struct Key: Sendable, Hashable {
        public var environment: String
        public var bundleId: String
        public var requestIdentifier: String

        public init(environment: String, bundleId: String, requestIdentifier: String) {
            self.environment = environment
            self.bundleId = bundleId
            self.requestIdentifier = requestIdentifier
        }
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Keeps the answers (JSON text) given to requests this caller reserved, in one prepared statement (parsed once
    /// per connection: written after every answer, it is on the busiest path of the service).
    public func record(_ answers: [(key: Key, answer: String)], seenAt: Date) async throws {
        guard !answers.isEmpty else { return }
        for try await _ in try await self.client.execute(
            RecordRealtimeAnswersStatement(answers: answers, seenAt: seenAt), logger: self.logger)
        {}
    }

    /// Removes the requests first seen before `cutoff`; returns how many.
    @discardableResult
    public func prune(before cutoff: Date) async throws -> Int {
        var count = 0
        for try await _ in try await self.client.query(
            "DELETE FROM realtime_answers WHERE first_seen_at < \(cutoff) RETURNING 1", logger: self.logger)
        {
            count += 1
        }
        return count
    }
}

/// Writes answers as an upsert, so that each row is found through the primary key whatever the plan (an `UPDATE …
/// FROM unnest(…)` is planned once per connection, and a plan made while the table was nearly empty scans all of it).
/// `first_seen_at` only matters for a row pruned since its reservation.
struct RecordRealtimeAnswersStatement: PostgresPreparedStatement {
    typealias Row = Int32

    static let sql = """
        INSERT INTO realtime_answers AS r (environment, bundle_id, request_identifier, first_seen_at, answer)
        SELECT b.environment, b.bundle_id, b.request_identifier, $5, convert_to(b.answer, 'UTF8')
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS b(environment, bundle_id, request_identifier, answer)
        ON CONFLICT (environment, bundle_id, request_identifier) DO UPDATE SET answer = EXCLUDED.answer
        RETURNING 1
        """

    var answers: [(key: RealtimeAnswers.Key, answer: String)]
    var seenAt: Date

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(self.answers.map(\.key.environment))
        bindings.append(self.answers.map(\.key.bundleId))
        bindings.append(self.answers.map(\.key.requestIdentifier))
        bindings.append(self.answers.map(\.answer))
        bindings.append(self.seenAt)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }
}
