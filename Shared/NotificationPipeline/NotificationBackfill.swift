public import AppStoreAPI
public import AppStoreModels
import Foundation
public import JWSVerification
import PipelineRecords
public import RdKafka

/// Feeds Get Notification History into the raw topic, exactly as if Apple had posted each notification to
/// ingest again: the value is Apple's `{"signedPayload": …}` body, the key the subject. Duplicates are
/// harmless (the updater dedupes by `notificationUUID`). Used by `iapctl backfill` and the reconciler.
///
/// History is per app and environment, so a backfill asks every scope it is given in turn (default: the
/// client's own app and environment).
public struct NotificationBackfill: Sendable {
    /// What a backfill did.
    public struct Report: Sendable, Hashable, CustomStringConvertible {
        public var notifications = 0
        public var pages = 0
        public var description: String {
            "\(self.notifications) notifications from \(self.pages) pages sent to the raw topic"
        }
    }

    /// The header that marks records a backfill wrote (value: the run's id).
    public static let sourceHeader = "backfill-run"

    let client: AppStoreServerAPIClient
    let producer: KafkaProducer
    let topics: PipelineTopics
    /// The apps and environments to ask.
    let scopes: [APIScope]

    public init(
        client: AppStoreServerAPIClient, producer: KafkaProducer, topics: PipelineTopics, scopes: [APIScope] = []
    ) {
        self.client = client
        self.producer = producer
        self.topics = topics
        self.scopes = scopes.isEmpty ? [APIScope(bundleId: client.bundleID, environment: client.environment)] : scopes
    }

    /// Backfills `[since, until)` of every scope, one after the other; the report adds them up. A scope that
    /// fails does not stop the others; the first failure is thrown once all were tried.
    public func run(since: Date, until: Date, onlyFailures: Bool) async throws -> Report {
        var total = Report()
        var failure: (any Error)?
        for scope in self.scopes {
            do {
                let report = try await self.run(scope, since: since, until: until, onlyFailures: onlyFailures)
                total.notifications += report.notifications
                total.pages += report.pages
            } catch {
                failure = failure ?? BackfillScopeError(scope: scope, underlying: error)
            }
        }
        if let failure { throw failure }
        return total
    }

    /// Backfills one scope's notifications sent in `[since, until)`; each page is produced and acknowledged
    /// before the next is fetched, so an interrupted run can simply be run again.
    func run(_ scope: APIScope, since: Date, until: Date, onlyFailures: Bool) async throws -> Report {
        let client = try self.client.scoped(bundleID: scope.bundleId, environment: scope.environment)
        let request = NotificationHistoryRequest(
            startDate: Int64(since.timeIntervalSince1970 * 1000), endDate: Int64(until.timeIntervalSince1970 * 1000),
            onlyFailures: onlyFailures ? true : nil)
        let runID = UUID().uuidString.lowercased()
        var report = Report()
        let producer = self.producer
        let topics = self.topics
        try await client.notificationHistoryPages(request) { (page) throws(AppStoreAPIError) in
            report.pages += 1
            do {
                var deliveries: [PendingDelivery] = []
                for item in page {
                    deliveries.append(try await producer.enqueue(Self.record(item, topics: topics, runID: runID)))
                }
                for delivery in deliveries { _ = try await delivery.report }
            } catch {
                throw AppStoreAPIError(.transport("producing to \(topics.raw) failed: \(error)"))
            }
            report.notifications += page.count
        }
        return report
    }

    /// The raw-topic record of one notification: the record ingest would have written for it, marked with the run.
    static func record(_ item: VerifiedHistoryNotification, topics: PipelineTopics, runID: String) -> ProducerRecord {
        var envelope = ResponseBodyV2()
        envelope.signedPayload = item.signedPayload
        let body = try! JSONEncoder().encode(envelope)
        let payload = item.notification.payload
        return RawTopicRecords.notification(
            body: Array(body), subject: NotificationSubject.of(payload, transaction: item.notification.transaction),
            environment: payload.rawEnvironment, bundleId: payload.bundleId, requestID: "backfill-\(runID)",
            topics: topics, extraHeaders: [KafkaHeader(name: Self.sourceHeader, text: runID)])
    }
}

/// One app and environment's backfill failed (the others were still tried).
public struct BackfillScopeError: Error, CustomStringConvertible {
    public var scope: APIScope
    public var underlying: any Error
    public var description: String { "backfill of \(self.scope) failed: \(self.underlying)" }
}
