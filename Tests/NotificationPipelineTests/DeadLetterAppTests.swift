import AppStoreModels
import Foundation
import NotificationPipeline
import PipelineRecords
import TestSupport
import Testing

/// Which app a DLQ record belongs to, so that replay and the console's DLQ list check it always: the header when
/// the record has one, else what its value says, else none (and such a record is no app's to replay).
@Suite struct DeadLetterAppTests {
    static func rejected(value: String?, headers: [String: String] = [:]) -> RejectedNotificationRecord {
        RejectedNotificationRecord(
            reason: "format", detail: "test", notificationUUID: nil,
            original: .init(topic: "t", partition: 0, offset: 1, key: "k", value: value, headers: headers))
    }

    @Test func theAppComesFromTheHeaderElseFromTheValue() throws {
        let signed = try SignedFixtures().signedNotification()
        let raw = #"{"signedPayload":""# + signed + #""}"#
        #expect(
            Self.rejected(value: raw, headers: [PipelineHeaders.bundleId: "com.example.other"]).bundleId
                == "com.example.other",
            "the header decides when present")
        #expect(
            Self.rejected(value: raw).bundleId == SignedFixtures.bundleId,
            "a raw body without the header: its payload's app")
        let purchase =
            #"{"schema":"appstore.app.purchase/v1","requestId":"r","transaction":{"bundleId":"com.example.third","productId":"p"}}"#
        #expect(
            Self.rejected(value: purchase).bundleId == "com.example.third",
            "a verified-topic record: its nearest bundleId")
        let nested =
            #"{"notification":{"payload":{"data":{"bundleId":"com.example.deep"}}},"bundleId":"com.example.top"}"#
        #expect(Self.rejected(value: nested).bundleId == "com.example.top", "nearest the top wins")
        #expect(Self.rejected(value: #"{"something":"else"}"#).bundleId == nil)
        #expect(Self.rejected(value: "not json").bundleId == nil)
        #expect(Self.rejected(value: nil).bundleId == nil, "a record naming no app belongs to none: replay refuses it")
    }
}
