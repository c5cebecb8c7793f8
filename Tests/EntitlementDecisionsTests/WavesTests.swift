import EntitlementDecisions
import PipelineRecords
import TestSupport
import Testing

/// How a batch is split into waves: one input per subject (and per log id, transaction and migrated subscription)
/// in each, every subject's inputs in their order.
@Suite struct WavesTests {
    static func prepared(_ records: [VerifiedNotificationRecord]) -> [PreparedInput] {
        records.map { PreparedInput(EntitlementInput(.notification($0), receivedAt: nil)) }
    }

    @Test func differentSubjectsShareAWaveAndOneSubjectsInputsFollowEachOther() {
        let inputs = Self.prepared([
            VerifiedRecords.step("SUBSCRIBED", original: "a", day: 0, expiresDay: 30),
            VerifiedRecords.step("SUBSCRIBED", original: "b", day: 0, expiresDay: 30),
            VerifiedRecords.step("DID_RENEW", original: "a", day: 30, expiresDay: 60),
            VerifiedRecords.step("DID_RENEW", original: "a", day: 60, expiresDay: 90),
            VerifiedRecords.step("DID_RENEW", original: "b", day: 30, expiresDay: 60),
        ])
        #expect(Waves.split(inputs) == [[0, 1], [2, 4], [3]])
    }

    @Test func aRepeatedNotificationGoesToTheNextWave() {
        let record = VerifiedRecords.step("SUBSCRIBED", original: "a", day: 0, expiresDay: 30)
        #expect(Waves.split(Self.prepared([record, record])) == [[0], [1]])
    }

    @Test func aMigrationWaitsForThePreviousSubscriptionsInputs() {
        var migrated = VerifiedRecords.step("SUBSCRIBED", original: "new", day: 40, expiresDay: 70)
        migrated.notification.transaction?.previousOriginalTransactionId = "old"
        let inputs = Self.prepared([
            VerifiedRecords.step("DID_RENEW", original: "old", day: 30, expiresDay: 60), migrated,
            VerifiedRecords.step("SUBSCRIBED", original: "other", day: 0, expiresDay: 30),
        ])
        #expect(Waves.split(inputs) == [[0, 2], [1]])
    }
}
