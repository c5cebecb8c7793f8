import AppStoreModels
import Crypto
import Foundation
import ServiceRuntime
import Storage
import Testing

@testable import RetentionMessaging

/// The rules choose as written (first rule whose every condition holds; unknown subscriptions only match conditions on
/// the request), and a rules file or setting that cannot work stops the service at start with its reason.
@Suite struct RetentionRulesTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "deploy/examples/retention-rules.json")
    static let app = "com.example.subscriptions"
    static let day: Int64 = 86_400_000

    /// A request for the weekly product in `locale`.
    static func request(locale: String = "en-US", product: String = "com.example.pro.weekly")
        -> DecodedRealtimeRequestBody
    {
        var request = DecodedRealtimeRequestBody()
        request.originalTransactionId = "1000"
        request.productId = product
        request.userLocale = locale
        request.rawEnvironment = "Production"
        return request
    }

    /// A stored subscription begun `tenure` days ago.
    static func subject(status: Int32 = 1, tenure: Int64, offers: [String] = []) -> RetentionSubject {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return RetentionSubject(
            known: true, productId: "com.example.pro.weekly", status: status,
            firstPurchaseDate: now - tenure * Self.day,
            redeemedPromotionalOffers: offers, newestTransactionId: "1009")
    }

    @Test func theExampleRulesChooseInOrder() throws {
        let rules = try RetentionRules.load(path: Self.example.path, bundleIds: [Self.app], canSignOffers: true)
        let choose = { (request: DecodedRealtimeRequestBody, subject: RetentionSubject) in
            rules.choose(bundleId: Self.app, request: request, subject: subject, now: Date())?.name
        }
        #expect(choose(Self.request(locale: "fr-CA"), Self.subject(tenure: 40)) == "french-speakers")
        #expect(choose(Self.request(locale: "fr_FR"), Self.subject(tenure: 40)) == "french-speakers")
        #expect(choose(Self.request(), Self.subject(tenure: 40)) == "loyal-subscribers-get-an-offer")
        #expect(
            choose(Self.request(), Self.subject(tenure: 40, offers: ["COMEBACK_50"])) == nil,
            "an offer already redeemed, and too long a tenure for the yearly suggestion")
        #expect(choose(Self.request(), Self.subject(status: 3, tenure: 40)) == nil, "billing retry is not active")
        #expect(choose(Self.request(), Self.subject(tenure: 10)) == "new-weekly-subscribers-see-yearly")
        #expect(choose(Self.request(product: "com.example.pro.yearly"), Self.subject(tenure: 10)) == nil)
        #expect(choose(Self.request(), RetentionSubject(known: false)) == nil, "unknown: only request conditions")
        #expect(
            rules.choose(
                bundleId: "com.other.app", request: Self.request(), subject: Self.subject(tenure: 40), now: Date())
                == nil)
    }

    @Test func localesMatchExactlyOrByLanguage() {
        typealias Conditions = RetentionRules.Conditions
        #expect(Conditions.matches(["en-US"], "en_us"))
        #expect(!Conditions.matches(["en-US"], "en-GB"))
        #expect(Conditions.matches(["en"], "en-GB"))
        #expect(!Conditions.matches(["en"], "eng-XX"))
        #expect(!Conditions.matches(["en"], nil))
    }

    @Test func aRulesFileThatCannotWorkIsRefusedWithItsReason() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let message = "6f1d9c1e-0d0e-4e55-8a55-0b6a1c2d3e01"
        let cases: [(String, String)] = [
            (#"{"apps":{"com.other":{"rules":[]}}}"#, "rules for com.other, which APPSTORE_APPS does not accept"),
            (
                #"{"apps":{"com.example.subscriptions":{"defaultMessage":"nope","rules":[]}}}"#,
                "com.example.subscriptions defaultMessage: nope is not a message identifier (a UUID)"
            ),
            (
                #"{"apps":{"com.example.subscriptions":{"rules":[{"name":"two","answer":{"message":"\#(message)","alternateProduct":{"productId":"p","messageIdentifier":"\#(message)"}}}]}}}"#,
                "com.example.subscriptions rule two: give exactly one of message, alternateProduct, promotionalOffer"
            ),
            (
                #"{"apps":{"com.example.subscriptions":{"rules":[{"name":"offer","answer":{"promotionalOffer":{"offerIdentifier":"O","messageIdentifier":"\#(message)"}}}]}}}"#,
                "com.example.subscriptions rule offer answers an offer: set APPSTORE_OFFER_KEY_FILE"
            ),
            (
                #"{"apps":{"com.example.subscriptions":{"rules":[{"name":"range","when":{"minTenureDays":9,"maxTenureDays":3},"answer":{"message":"\#(message)"}}]}}}"#,
                "com.example.subscriptions rule range: minTenureDays 9 is above maxTenureDays 3"
            ),
        ]
        for (index, (text, reason)) in cases.enumerated() {
            let file = directory.appending(path: "\(index).json")
            try Data(text.utf8).write(to: file)
            #expect(throws: RetentionRulesError(reason)) {
                try RetentionRules.load(path: file.path, bundleIds: [Self.app], canSignOffers: false)
            }
        }
        #expect(throws: RetentionRulesError("RETENTION_RULES_FILE: cannot read /no/such/file")) {
            try RetentionRules.load(path: "/no/such/file", bundleIds: [Self.app], canSignOffers: false)
        }
    }

    @Test func settingsRefuseAnAppWithoutItsAppleIdAndAMissingRulesFile() throws {
        let base = [
            "DATABASE_URL": "postgres://postgres@127.0.0.1:1/postgres", "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
        ]
        #expect(throws: SettingsError.self) {
            try RetentionSettings(
                EnvironmentSettings(base.merging(["APPSTORE_APPS": "com.example.subscriptions"]) { a, _ in a }))
        }
        #expect(throws: SettingsError.self) {
            try RetentionSettings(
                EnvironmentSettings(base.merging(["APPSTORE_APPS": "com.example.subscriptions:1"]) { a, _ in a }))
        }
        let withRules = base.merging([
            "APPSTORE_APPS": "com.example.subscriptions:1", "RETENTION_RULES_FILE": Self.example.path,
        ]) { a, _ in a }
        #expect(throws: SettingsError.self, "the example answers offers: it needs the offer key") {
            try RetentionSettings(EnvironmentSettings(withRules))
        }
        let keyFile = FileManager.default.temporaryDirectory.appending(path: "offer-\(UUID().uuidString).p8")
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: keyFile)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let settings = try RetentionSettings(
            EnvironmentSettings(
                withRules.merging([
                    "APPSTORE_OFFER_KEY_FILE": keyFile.path, "APPSTORE_OFFER_KEY_ID": "OFFER1",
                    "APPSTORE_OFFER_ISSUER_ID": "issuer",
                ]) { a, _ in a }))
        #expect(settings.rules.apps[Self.app]?.rules.count == 3)
    }
}
