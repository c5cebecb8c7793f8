import AppStoreModels
import Foundation
public import Logging
public import PostgresNIO

/// What the retention rules may ask about the subscription a customer is about to cancel: its product and status as
/// last stored, since when they subscribe (tenure), the promotional offers they have redeemed, their newest
/// transaction (to bind an offer's signature) and app account token. Read-only.
public struct RetentionSubject: Codable, Hashable, Sendable {
    /// Whether anything is stored about the subscription.
    public var known: Bool
    public var productId: String?
    /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked (as Apple last reported it).
    public var status: Int32?
    /// The first purchase of the subscription (epoch ms).
    public var firstPurchaseDate: Int64?
    /// Promotional offers (offerType 2) the subscription has redeemed, by identifier (sorted).
    public var redeemedPromotionalOffers: [String]
    public var newestTransactionId: String?
    public var appAccountToken: String?

    public init(
        known: Bool, productId: String? = nil, status: Int32? = nil, firstPurchaseDate: Int64? = nil,
        redeemedPromotionalOffers: [String] = [], newestTransactionId: String? = nil, appAccountToken: String? = nil
    ) {
        self.known = known
        self.productId = productId
        self.status = status
        self.firstPurchaseDate = firstPurchaseDate
        self.redeemedPromotionalOffers = redeemedPromotionalOffers
        self.newestTransactionId = newestTransactionId
        self.appAccountToken = appAccountToken
    }
}

/// Reads ``RetentionSubject`` by (environment, app, originalTransactionId) in one statement, through the
/// subscriptions' primary key and `transactions_original`.
public struct RetentionFacts: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The subject of a real-time request, and in the same statement the request reserved for this replica among
    /// every replica's (``RealtimeAnswers``): `.new` if nobody saw it, else what its first answer left. The request's
    /// key names the same environment and app as the subject.
    public func subject(
        originalTransactionId: String, reserving request: RealtimeAnswers.Key, seenAt: Date
    ) async throws -> (RetentionSubject, RealtimeAnswers.Reservation) {
        let statement = RetentionSubjectReservingStatement(
            subject: RetentionSubjectStatement(
                environment: request.environment, bundleId: request.bundleId,
                originalTransactionId: originalTransactionId),
            request: request, seenAt: seenAt)
        for try await row in try await self.client.execute(statement, logger: self.logger) { return row }
        throw StorageError("the retention look-up returned no row")
    }

    /// The subject of a real-time request.
    public func subject(environment: String, bundleId: String, originalTransactionId: String) async throws
        -> RetentionSubject
    {
        let statement = RetentionSubjectStatement(
            environment: environment, bundleId: bundleId, originalTransactionId: originalTransactionId)
        var subject = RetentionSubject(known: false)
        for try await row in try await self.client.execute(statement, logger: self.logger) { subject = row }
        return subject
    }
}

/// The subject as a prepared statement (planned once per connection: the endpoint answers Apple within its budget).
struct RetentionSubjectStatement: PostgresPreparedStatement {
    typealias Row = RetentionSubject
    /// Named once (the protocol's default name is made from the type on every execution).
    static let name = "retention_subject"

    /// The subject's columns, in ``decodeRow(_:)``'s order, from ``from``: one pass over the subscription's
    /// transactions (aggregates, one row even when there is none) beside its subscription row, where seven
    /// sub-selects over a CTE each had a plan node of their own (`RetentionFactsTests` compares the two).
    static let columns = """
            s.original_transaction_id IS NOT NULL OR t.transactions > 0,
            COALESCE(s.product_id, t.newest_product_id),
            s.status,
            t.first_purchase_date,
            COALESCE(t.redeemed_offers, '[]')::text,
            t.newest_transaction_id,
            t.app_account_token
        """

    /// The rows behind ``columns``, on $1 environment, $2 app, $3 originalTransactionId.
    static let from = """
        FROM (
            SELECT count(*) AS transactions,
                   (array_agg(product_id ORDER BY purchase_date DESC NULLS LAST))[1] AS newest_product_id,
                   min(COALESCE(original_purchase_date, purchase_date)) AS first_purchase_date,
                   json_agg(DISTINCT offer_identifier ORDER BY offer_identifier)
                       FILTER (WHERE offer_type = 2 AND offer_identifier IS NOT NULL) AS redeemed_offers,
                   (array_agg(transaction_id ORDER BY purchase_date DESC NULLS LAST, transaction_id DESC))[1]
                       AS newest_transaction_id,
                   (array_agg(app_account_token) FILTER (WHERE app_account_token IS NOT NULL))[1] AS app_account_token
            FROM transactions WHERE environment = $1 AND bundle_id = $2 AND original_transaction_id = $3
        ) t
        LEFT JOIN subscriptions s
            ON s.environment = $1 AND s.bundle_id = $2 AND s.original_transaction_id = $3
        """

    static let sql = "SELECT\n" + columns + "\n" + from

    var environment: String
    var bundleId: String
    var originalTransactionId: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(self.environment)
        bindings.append(self.bundleId)
        bindings.append(self.originalTransactionId)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> RetentionSubject {
        try Self.subject(of: row)
    }

    /// The subject from a row whose first columns are ``columns``.
    static func subject(of row: PostgresRow) throws -> RetentionSubject {
        let (known, product, status, first, offers, newest, token) = try row.decode(
            (Bool, String?, Int32?, Int64?, String, String?, String?).self)
        return RetentionSubject(
            known: known, productId: product, status: status, firstPurchaseDate: first,
            redeemedPromotionalOffers: (try? FastJSONDecoder().decode([String].self, from: Array(offers.utf8))) ?? [],
            newestTransactionId: newest, appAccountToken: token)
    }
}

/// The subject, read in the same statement that reserves the real-time request in ``RealtimeAnswers`` (one round trip
/// while Apple waits, as before the replicas shared their answers). $4 is the request identifier, $5 when it was seen.
/// The last two columns: whether this statement reserved it, and the answer stored before (null: new, or in flight).
///
/// The request is found through the primary key whatever the plan: a request seen before is "updated" to itself by
/// `ON CONFLICT … DO UPDATE`, which returns its row (a row this statement inserted has no `xmax`). Reading it with a
/// `SELECT … WHERE` instead, the prepared statement's plan, made while the table was nearly empty, scanned the whole
/// table for every request (PostgreSQL at 0.6 cores at 1,000 requests/s instead of 0.1). A reservation another
/// transaction has not committed yet is waited for, then returned with its answer, if any.
struct RetentionSubjectReservingStatement: PostgresPreparedStatement {
    typealias Row = (RetentionSubject, RealtimeAnswers.Reservation)
    static let name = "retention_subject_reserving"

    static let sql =
        """
        WITH reserved AS (
            INSERT INTO realtime_answers AS r (environment, bundle_id, request_identifier, first_seen_at)
            VALUES ($1, $2, $4, $5)
            ON CONFLICT (environment, bundle_id, request_identifier) DO UPDATE SET answer = r.answer
            RETURNING r.xmax = 0 AS new, r.answer
        )
        SELECT
        """ + RetentionSubjectStatement.columns
            + """
            ,
                (SELECT new FROM reserved), (SELECT answer FROM reserved)
            """ + "\n" + RetentionSubjectStatement.from

    var subject: RetentionSubjectStatement
    var request: RealtimeAnswers.Key
    var seenAt: Date

    func makeBindings() throws -> PostgresBindings {
        var bindings = try self.subject.makeBindings()
        bindings.append(self.request.requestIdentifier)
        bindings.append(self.seenAt)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let subject = try RetentionSubjectStatement.subject(of: row)
        let columns = row.makeRandomAccess()
        let reserved = try columns[7].decode(Bool.self)
        let answer = try columns[8].decode(ByteBuffer?.self)
        return (subject, RealtimeAnswers.Reservation(reserved: reserved, answer: answer))
    }
}
