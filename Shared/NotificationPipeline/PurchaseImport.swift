public import AppStoreAPI
public import AppStoreModels
import Entitlements
import Foundation
import PipelineRecords
public import RdKafka

/// Brings purchases the pipeline has not heard of into it: looks transaction ids and receipts up with the
/// App Store Server API (every answer verified), turns them into ``AppPurchaseRecord``s and writes them to
/// the verified topic, where the entitlement-updater applies them. customer-api's POST and `iapctl resync`
/// both go through here.
public struct PurchaseImport: Sendable {
    /// The API client (any scope: each call names its app and environment).
    public let client: AppStoreServerAPIClient

    public init(client: AppStoreServerAPIClient) {
        self.client = client
    }

    // MARK: Look-ups

    /// Get Transaction Info in `environment`, or Production then Sandbox (4040010) when it is unknown.
    public func transaction(_ transactionId: String, bundleId: String, environment: Environment?)
        async throws(AppStoreAPIError)
        -> VerifiedTransaction
    {
        try await self.client.scoped(
            bundleID: bundleId, environment: environment ?? .production, fallbackToSandbox: environment == nil
        )
        .transactionInfo(transactionId)
    }

    /// Every transaction of the purchases `transactionIds` belong to: Get Transaction History (every page)
    /// for each id that an earlier answer did not already include.
    public func history(of transactionIds: [String], bundleId: String, environment: Environment?)
        async throws(AppStoreAPIError)
        -> [VerifiedTransaction]
    {
        let client = try self.client.scoped(
            bundleID: bundleId, environment: environment ?? .production, fallbackToSandbox: environment == nil)
        var seen: Set<String> = []
        var result: [VerifiedTransaction] = []
        for id in transactionIds where !seen.contains(id) {
            for item in try await client.transactionHistory(id) {
                let transaction = item.transaction
                if let id = transaction.transactionId, seen.insert(id).inserted { result.append(item) }
                if let original = transaction.originalTransactionId { seen.insert(original) }
            }
        }
        return result
    }

    /// Get All Subscription Statuses for the subscription of `transactionId`, as status snapshots (one per
    /// subscription of the answer) the updater applies like refund-resolver's.
    public func snapshots(of transactionId: String, bundleId: String, environment: Environment?, requestId: String)
        async throws(AppStoreAPIError)
        -> [StatusSnapshot]
    {
        let statuses = try await self.client
            .scoped(bundleID: bundleId, environment: environment ?? .production, fallbackToSandbox: environment == nil)
            .subscriptionStatuses(transactionId)
        return statuses.subscriptions.map {
            StatusSnapshot(
                requestId: "\(requestId):\($0.originalTransactionId)", notificationUUID: requestId,
                subject: $0.originalTransactionId,
                environment: statuses.environment.rawValue, status: $0.status, transaction: $0.transaction,
                renewalInfo: $0.renewalInfo,
                signedTransactionInfo: $0.signedTransactionInfo, signedRenewalInfo: $0.signedRenewalInfo)
        }
    }

    // MARK: Records

    /// What a request hands over beside its transactions.
    public struct Request: Sendable {
        public var requestId: String
        public var appUserId: String?
        public var onConflict: AppPurchaseRecord.ConflictPolicy
        /// Why the purchases may move from another customer (a device's verification, or an operator).
        public var transferProof: TransferProof?
        public var source: AppPurchaseRecord.Source

        public init(
            requestId: String = UUID().uuidString.lowercased(), appUserId: String?,
            onConflict: AppPurchaseRecord.ConflictPolicy,
            transferProof: TransferProof? = nil, source: AppPurchaseRecord.Source
        ) {
            self.requestId = requestId
            self.appUserId = appUserId
            self.onConflict = onConflict
            self.transferProof = transferProof
            self.source = source
        }
    }

    /// One record per transaction, each purchase's transactions oldest first (so the newest is applied last).
    public static func records(_ transactions: [VerifiedTransaction], request: Request) -> [AppPurchaseRecord] {
        transactions
            .sorted {
                ($0.transaction.originalTransactionId ?? "", $0.transaction.purchaseDate?.millisecondsSince1970 ?? 0)
                    < (
                        $1.transaction.originalTransactionId ?? "",
                        $1.transaction.purchaseDate?.millisecondsSince1970 ?? 0
                    )
            }
            .map {
                AppPurchaseRecord(
                    requestId: request.requestId, appUserId: request.appUserId, onConflict: request.onConflict,
                    transferProof: request.transferProof, source: request.source,
                    environment: $0.transaction.rawEnvironment ?? "unknown", transaction: $0.transaction,
                    signedTransactionInfo: $0.signed)
            }
    }

    /// Writes the records to the verified topic and returns once the broker acknowledged every one.
    public static func publish(
        _ records: [AppPurchaseRecord], producer: KafkaProducer, topics: PipelineTopics, signing: RecordSigner
    )
        async throws
    {
        try await producer.send(
            try records.map { try VerifiedTopicRecords.appPurchase($0, topics: topics, signing: signing) })
    }

    // MARK: Resync

    /// What a resync wrote.
    public struct Resynced: Sendable {
        public var transactions: Int
        public var statuses: Int

        public init(transactions: Int, statuses: Int) {
            self.transactions = transactions
            self.statuses = statuses
        }
    }

    /// How a resync brings each subscription's status up to date.
    public enum StatusStep: Sendable {
        /// Asks Apple here and writes the answers as status snapshots (`iapctl resync`, which may sign them).
        case snapshots
        /// Writes a status request per subscription, which refund-resolver answers with a snapshot (customer-api's
        /// console: its key may not sign snapshots, so a leaked one cannot invent a status).
        case requests
    }

    /// Resyncs the purchases `transactionIds` belong to: their whole history as app-purchase records (bound to
    /// `request.appUserId` when set), then each subscription's status, as a snapshot or a status request
    /// (`statuses`), so the newest state is applied last. Returns once the broker acknowledged everything.
    /// `iapctl resync` (snapshots) and the console (requests) use it.
    public func resync(
        _ transactionIds: [String], bundleId: String, environment: Environment?, request: Request,
        producer: KafkaProducer,
        topics: PipelineTopics, signing: RecordSigner, statuses: StatusStep = .snapshots
    ) async throws -> Resynced {
        let history = try await self.history(of: transactionIds, bundleId: bundleId, environment: environment)
        let records = Self.records(history, request: request)
        let subscriptions = Dictionary(
            history.filter { $0.transaction.type == .autoRenewableSubscription }
                .compactMap { item in item.transaction.originalTransactionId.map { ($0, item.transaction.environment) }
                }
        ) { first, _ in first }
        .sorted { $0.key < $1.key }
        // Each subscription's status record, made before anything is written (Apple is asked here for snapshots).
        var statusRecords: [ProducerRecord] = []
        switch statuses {
        case .requests:
            for (original, subscriptionEnvironment) in subscriptions {
                let statusRequest = StatusRequest(
                    requestId: "resync:\(request.requestId):\(original)", originalTransactionId: original,
                    environment: (subscriptionEnvironment ?? environment ?? .production).rawValue, bundleId: bundleId,
                    reason: StatusRequest.Reason.supportResync, notificationUUID: "resync:\(request.requestId)")
                statusRecords.append(try Self.record(statusRequest, topics: topics))
            }
        case .snapshots:
            var snapshots: [StatusSnapshot] = []
            for (original, subscriptionEnvironment) in subscriptions
            where !snapshots.contains(where: { $0.subject == original }) {
                snapshots += try await self.snapshots(
                    of: original, bundleId: bundleId, environment: subscriptionEnvironment ?? environment,
                    requestId: "resync:\(request.requestId)")
            }
            statusRecords = try snapshots.map {
                try VerifiedTopicRecords.snapshot($0, topics: topics, requestId: $0.requestId, signing: signing)
            }
        }
        try await Self.publish(records, producer: producer, topics: topics, signing: signing)
        try await producer.send(statusRecords)
        return Resynced(transactions: records.count, statuses: statusRecords.count)
    }

    /// A status request as the status-requests topic carries it (the same record the event-publisher relays).
    static func record(_ request: StatusRequest, topics: PipelineTopics) throws -> ProducerRecord {
        ProducerRecord(
            topic: topics.statusRequests, key: Array(request.key.utf8),
            value: Array(try AppStoreJSON.makeCanonicalEncoder().encode(request)),
            headers: [
                KafkaHeader(name: "event-id", text: request.requestId),
                KafkaHeader(name: PipelineHeaders.environment, text: request.environment),
                KafkaHeader(name: PipelineHeaders.bundleId, text: request.bundleId ?? ""),
            ])
    }
}
