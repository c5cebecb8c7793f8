import Foundation
import TestSupport
import Testing

@testable import AppStoreModels
@testable import Entitlements

/// The updater writes its events' canonical JSON with the event's own writer (`EntitlementEvent.canonicalJSON()`),
/// and what it does not write itself with `FastJSONEncoder`: for every event the rules emit (every type, late ones,
/// moves, migrations, refunded items), for generated events with every optional member present or absent and strings
/// that need escaping, and for an event with every member present, the bytes are `JSONEncoder`'s canonical ones, so
/// the published events, their ids' inputs and the sim comparisons are unchanged.
@Suite struct EventEncodingTests {
    @Test func everyEmittedEventEncodesToTheCanonicalBytes() throws {
        let events = try EventSchemaTests.allEmittedEvents()
        let foundation = AppStoreJSON.makeCanonicalEncoder()
        #expect(Set(events.map(\.eventType)).count >= 10, "many event types")
        for event in events {
            let expected = Array(try foundation.encode(event))
            let fast = try FastJSONEncoder.canonical.writtenBytes(event)
            #expect(fast != nil, "written by the fast encoder itself: \(event.eventType)")
            #expect(fast == expected, "\(event.eventType): \(String(decoding: fast ?? [], as: UTF8.self))")
            let own = try event.canonicalJSON()
            #expect(own == expected, "\(event.eventType): \(String(decoding: own, as: UTF8.self))")
        }
    }

    // MARK: Every member

    /// An event with every member of its own, of its facts, of its state and of its cause present (the fixture
    /// the completeness check below holds to that).
    static func fullyPopulated() throws -> EntitlementEvent {
        var random = SeededGenerator(seed: 7)
        return try Self.generated(&random, presence: 1)
    }

    /// The optional-typed members of a value that are nil, by name.
    static func nilMembers(of value: Any) -> [String] {
        Mirror(reflecting: value).children.compactMap { child in
            let inner = Mirror(reflecting: child.value)
            guard inner.displayStyle == .optional, inner.children.isEmpty else { return nil }
            return child.label ?? "?"
        }
    }

    @Test func theFullyPopulatedEventLeavesNoMemberOut() throws {
        let event = try Self.fullyPopulated()
        // A member added to the event or its facts is nil here until the fixture sets it, and then the byte
        // comparison tells whether `canonicalJSON()` writes it.
        #expect(Self.nilMembers(of: event).isEmpty, "\(Self.nilMembers(of: event))")
        #expect(Self.nilMembers(of: event.facts).isEmpty, "\(Self.nilMembers(of: event.facts))")
        #expect(Self.nilMembers(of: event.cause).isEmpty)
        #expect(Self.nilMembers(of: event.state!).isEmpty)
        let expected = Array(try AppStoreJSON.makeCanonicalEncoder().encode(event))
        #expect(try event.canonicalJSON() == expected, "\(String(decoding: expected, as: UTF8.self))")
        // Every member is in the JSON: as many top-level keys as the event and its facts have members.
        let object = try JSONSerialization.jsonObject(with: Data(try event.canonicalJSON())) as! [String: Any]
        let members =
            Mirror(reflecting: event).children.filter { $0.label != "facts" }.count
            + Mirror(reflecting: event.facts).children.count
        #expect(object.count == members)
    }

    @Test func generatedEventsEncodeToTheCanonicalBytes() throws {
        var random = SeededGenerator(seed: 39)
        let foundation = AppStoreJSON.makeCanonicalEncoder()
        for _ in 0..<1_500 {
            let event = try Self.generated(&random, presence: Double(random.next() % 101) / 100)
            let own = try event.canonicalJSON()
            #expect(own == Array(try foundation.encode(event)), "\(String(decoding: own, as: UTF8.self))")
            #expect(own == (try FastJSONEncoder.canonical.encode(event)))
        }
    }

    // MARK: Generated events

    /// Strings that need escaping or sort oddly, and plain ones.
    static let strings = [
        "", "plain", "a/b", "\"quoted\"", "back\\slash", "\u{0}\u{1F}\t\n\r\u{8}\u{C}", "\u{7F}", "line\u{2028}sep",
        "é", "😀", "com.example.app", "Production", "https://example.com/x?y=/z",
    ]

    /// An event whose every optional member is present with probability `presence`, values drawn from `random`.
    static func generated(_ random: inout SeededGenerator, presence: Double) throws -> EntitlementEvent {
        func present() -> Bool { Double(random.next() % 1_000) / 1_000 < presence }
        func string() -> String { Self.strings[Int(random.next() % UInt64(Self.strings.count))] }
        func text() -> String? { present() ? string() : nil }
        func int64() -> Int64? { present() ? Int64(bitPattern: random.next()) >> (random.next() % 64) : nil }
        func int32() -> Int32? { present() ? Int32(truncatingIfNeeded: Int64(bitPattern: random.next())) : nil }
        func bool() -> Bool? { present() ? random.next() % 2 == 0 : nil }
        func state() -> EntitlementState {
            EntitlementState(
                customer: string(), productId: string(), active: random.next() % 2 == 0,
                originalTransactionId: string(), sourceTransactionId: string(), ownershipType: string(),
                validFrom: int64(), validUntil: int64(), revokedAt: int64(), revocationReason: int32(),
                revocationType: text(), entitlementId: text())
        }
        var facts = PurchaseFacts(environment: string(), bundleId: string())
        facts.appAppleId = int64()
        facts.store = string()
        facts.entitlementId = text()
        facts.transactionId = text()
        facts.originalTransactionId = text()
        facts.productType = text()
        facts.purchaseDate = int64()
        facts.expirationDate = int64()
        facts.gracePeriodExpiresDate = int64()
        facts.isInGracePeriod = bool()
        facts.isInBillingRetry = bool()
        facts.subscriptionStatus = int32()
        facts.autoRenewStatus = int32()
        facts.autoRenewProductId = text()
        facts.expirationIntent = int32()
        facts.periodType = text()
        facts.offerIdentifier = text()
        facts.price = text()
        facts.currency = text()
        facts.storefront = text()
        facts.quantity = int32()
        facts.ownershipType = text()
        facts.subscriptionGroupIdentifier = text()
        facts.billingPlanType = text()
        facts.renewalBillingPlanType = text()
        facts.renewalPrice = text()
        facts.offerDiscountType = text()
        if present() {
            var commitment = CommitmentFacts(nil, RenewalCommitmentInfo())!
            commitment.billingPeriodNumber = int32()
            commitment.commitmentPrice = text()
            commitment.commitmentRenewalDate = int64()
            facts.commitmentInfo = commitment
        }
        facts.outOfOrder = random.next() % 2 == 0
        var event = EntitlementEvent(
            eventType: string(), stream: [.changes, .family, .revocations][Int(random.next() % 3)],
            occurredAt: Int64(bitPattern: random.next()), subject: string(), customer: string(),
            productId: string(), cause: .init(notificationUUID: string(), notificationType: string(), subtype: text()),
            state: present() ? state() : nil,
            revocation: present()
                ? .init(
                    transactionId: string(), revokedAt: int64(), reason: int32(), type: text(), percentage: int32(),
                    periodStart: int64(), periodEnd: int64()) : nil,
            facts: facts)
        event.schemaVersion = Int(random.next() % 5)
        event.sequence = int64()
        event.previousProductId = text()
        event.previousCustomer = text()
        event.responseDeadline = int64()
        event.consumptionRequestReason = text()
        if present() {
            event.massExtension = .init(
                requestIdentifier: text(), productId: text(), storefrontCountryCodes: present() ? [string()] : nil,
                succeededCount: int64(), failedCount: int64())
        }
        if present() { event.migration = .init(previousOriginalTransactionId: string(), previousState: state()) }
        if present() {
            event.refundedItems = [
                .init(
                    sku: string(), revokedAt: int64(),
                    refunds: [.init(amount: text(), refundedAt: int64(), reason: text(), type: text())])
            ]
        }
        return event
    }
}
