import AppStoreAPI
import AppStoreModels
import Entitlements
import Foundation
import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import ServiceRuntime
import Storage
import TestSupport
import Testing

@testable import CustomerAPI

/// customer-api's offer route, a process of its binary, against a real PostgreSQL written by the updater's repository: who may have which
/// offer follows the stored history (subscribed in the group, had the introductory offer, Apple's win-back list), and
/// every signature it answers verifies the way StoreKit checks it.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct OfferRouteTests {
    static let app = "com.example.app"
    static let key = OfferSigningKey(keyID: "OFFERKEY01", issuerID: "issuer-1", privateKey: .init())
    static let day: Int64 = 86_400_000

    let logger: Logger = {
        var logger = Logger(label: "offer-test")
        logger.logLevel = .error
        return logger
    }()

    /// A subscription of group G1 begun with the introductory offer, renewed since, whose newest renewal info lists
    /// win-back offer WINBACK1, bound to app user `user-1`; `user-2` has nothing. `offers`: the route's key.
    func withAPI(offers: OfferSigningKey?, _ body: @Sendable (ServiceHTTPClient, String) async throws -> Void)
        async throws
    {
        let logger = self.logger
        try await withLocalPostgres { url in
            let key = try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
                try await MigrationRunner().migrate(client: client, logger: logger)
                let repository = EntitlementRepository(client: client, logger: logger)
                var first = VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "sub-1", day: 0, expiresDay: 7)
                first.environment = "Production"
                first.notification.transaction?.environment = .production
                first.notification.transaction?.bundleId = Self.app
                first.notification.payload.data?.environment = .production
                first.notification.payload.data?.bundleId = Self.app
                first.notification.transaction?.subscriptionGroupIdentifier = "G1"
                first.notification.transaction?.rawOfferType = 1
                var renewed = VerifiedRecords.step("DID_RENEW", original: "sub-1", day: 7, expiresDay: 37)
                renewed.environment = "Production"
                renewed.notification.transaction?.environment = .production
                renewed.notification.transaction?.bundleId = Self.app
                renewed.notification.payload.data?.environment = .production
                renewed.notification.payload.data?.bundleId = Self.app
                renewed.notification.transaction?.subscriptionGroupIdentifier = "G1"
                var renewal = JWSRenewalInfoDecodedPayload()
                renewal.originalTransactionId = "sub-1"
                renewal.productId = "pro"
                renewal.environment = .production
                renewal.eligibleWinBackOfferIds = ["WINBACK1"]
                renewal.signedDate = renewed.notification.payload.signedDate
                renewed.notification.renewalInfo = renewal
                let posted = AppPurchaseRecord(
                    requestId: "req-1", appUserId: "user-1", onConflict: .refuse,
                    transferProof: .admin(operator: "test"),
                    source: .signedTransaction, environment: "Production", transaction: first.notification.transaction!,
                    signedTransactionInfo: "signed")
                _ = try await repository.apply(posted, receivedAt: nil)
                for record in [first, renewed] {
                    _ = try await repository.apply(record, receivedAt: nil)
                }
                return try await APIKeyStore(client: client, logger: logger).create(bundleId: Self.app).token
            }
            // customer-api as a process of its binary, its offer key (when given) in a file as deployed.
            let directory = try LocalComponents.temporaryDirectory("offer-route")
            var environment = ["DATABASE_URL": url, "LOG_LEVEL": "warning"]
            if let offers {
                let file = directory.appendingPathComponent("offer-key.p8")
                try Data(offers.privateKey.pemRepresentation.utf8).write(to: file)
                let catalog = directory.appendingPathComponent("offer-catalog.json")
                try Data(Self.catalog.utf8).write(to: catalog)
                environment.merge([
                    "APPSTORE_OFFER_KEY_FILE": file.path, "APPSTORE_OFFER_KEY_ID": offers.keyID,
                    "APPSTORE_OFFER_ISSUER_ID": offers.issuerID, "APPSTORE_OFFER_CATALOG_FILE": catalog.path,
                ]) { _, new in new }
            }
            let fleet = try ServiceFleet(environment: environment, directory: directory, only: ["customer-api"])
            try await fleet.whileRunning { try await body(ServiceHTTPClient(baseURL: await fleet.customerAPIURL), key) }
        }
    }

    /// The app's catalog: group G1 with `pro` (promotional offer COMEBACK) and `pro.yearly`, never sold here; group G2
    /// with `other.product`.
    static let catalog =
        #"{"\#(app)": {"G1": {"pro": ["COMEBACK"], "pro.yearly": []}, "G2": {"other.product": []}}}"#

    /// POSTs an offer request for `user`; the answer and its JSON.
    static func post(_ client: ServiceHTTPClient, key: String, user: String, _ body: String) async throws -> (
        HTTPResponse.Status, [String: Any]
    ) {
        let response = try await client.execute(
            uri: "/v1/apps/\(Self.app)/customers/\(user)/offers", method: .post,
            headers: [.authorization: "Bearer \(key)", .contentType: "application/json"],
            body: ByteBuffer(string: body))
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
        return (response.status, json)
    }

    @Test func promotionalOffersAreSignedForSubscribersOfTheGroupOnly() async throws {
        try await self.withAPI(offers: Self.key) { client, key in
            let keys = [Self.key.keyID: Self.key.privateKey.publicKey]
            let (status, v2) = try await Self.post(
                client, key: key, user: "user-1",
                #"{"offer":"promotional","productId":"pro","offerIdentifier":"COMEBACK"}"#)
            #expect(status == .ok, "\(v2)")
            #expect(v2["transactionId"] as? String == "sub-1-t7", "the newest transaction of the customer")
            #expect(v2["eligibleWinBackOfferIds"] as? [String] == ["WINBACK1"])
            #expect(v2["subscriptionGroupIdentifier"] as? String == "G1")
            let claims = try OfferJWS.verify(
                try #require(v2["signature"] as? String), audience: .promotionalOffer, bundleId: Self.app,
                issuerID: "issuer-1", keys: keys)
            #expect(
                claims.productId == "pro" && claims.offerIdentifier == "COMEBACK" && claims.transactionId == "sub-1-t7")

            let (v1Status, v1) = try await Self.post(
                client, key: key, user: "user-1",
                #"{"offer":"promotional","productId":"pro","offerIdentifier":"COMEBACK","signatureVersion":"V1"}"#)
            #expect(v1Status == .ok)
            let signature = try JSONDecoder().decode(
                PromotionalOfferSignatureV1.self,
                from: JSONSerialization.data(withJSONObject: try #require(v1["signatureV1"])))
            try signature.verify(bundleId: Self.app, keyID: "OFFERKEY01", publicKey: Self.key.privateKey.publicKey)
            #expect(v1["signature"] == nil)

            let (stranger, refusal) = try await Self.post(
                client, key: key, user: "user-2",
                #"{"offer":"promotional","productId":"pro","offerIdentifier":"COMEBACK"}"#)
            #expect(stranger == .conflict && refusal["error"] as? String == "not-eligible")
            let (sandbox, _) = try await Self.post(
                client, key: key, user: "user-1",
                #"{"offer":"promotional","productId":"pro","offerIdentifier":"COMEBACK","environment":"Sandbox"}"#)
            #expect(sandbox == .conflict, "Production history does not make a Sandbox customer eligible")
        }
    }

    @Test func introductoryEligibilityFollowsTheGroupsHistory() async throws {
        try await self.withAPI(offers: Self.key) { client, key in
            let keys = [Self.key.keyID: Self.key.privateKey.publicKey]
            let (status, had) = try await Self.post(
                client, key: key, user: "user-1", #"{"offer":"introductory","productId":"pro"}"#)
            #expect(status == .ok && had["allowIntroductoryOffer"] as? Bool == false)
            let claims = try OfferJWS.verify(
                try #require(had["signature"] as? String), audience: .introductoryOfferEligibility, bundleId: Self.app,
                issuerID: "issuer-1", keys: keys)
            #expect(claims.allowIntroductoryOffer == false && claims.transactionId == "sub-1-t7")

            // A sibling of the group that no stored transaction names: the catalog says it is G1's, so not new.
            let (siblingStatus, sibling) = try await Self.post(
                client, key: key, user: "user-1", #"{"offer":"introductory","productId":"pro.yearly"}"#)
            #expect(siblingStatus == .ok && sibling["allowIntroductoryOffer"] as? Bool == false, "\(sibling)")
            #expect(sibling["subscriptionGroupIdentifier"] as? String == "G1" && sibling["signature"] is String)

            let (_, otherGroup) = try await Self.post(
                client, key: key, user: "user-1", #"{"offer":"introductory","productId":"other.product"}"#)
            #expect(otherGroup["allowIntroductoryOffer"] as? Bool == true, "another group's offer is still new to them")
            #expect(
                otherGroup["signature"] == nil,
                "a history that shows nothing proves nothing: no signed true, StoreKit decides from Apple's record")

            let (_, newcomer) = try await Self.post(
                client, key: key, user: "user-2", #"{"offer":"introductory","productId":"pro"}"#)
            #expect(newcomer["allowIntroductoryOffer"] as? Bool == true && newcomer["signature"] == nil)
            #expect(newcomer["eligibleWinBackOfferIds"] as? [String] == [])
        }
    }

    @Test func badRequestsAndAMissingKeyAreRefusedClearly() async throws {
        try await self.withAPI(offers: Self.key) { client, key in
            for (body, code) in [
                (#"{"offer":"promotional","productId":"pro"}"#, "bad-body"),
                (#"{"offer":"seasonal","productId":"pro"}"#, "bad-offer"),
                (
                    #"{"offer":"promotional","productId":"pro","offerIdentifier":"COMEBACK","signatureVersion":"V3"}"#,
                    "bad-signature-version"
                ),
                // Only what the catalog lists is signed: StoreKit would give nothing else.
                (#"{"offer":"introductory","productId":"com.example.unknown"}"#, "unknown-product"),
                (#"{"offer":"promotional","productId":"pro","offerIdentifier":"FREE_FOREVER"}"#, "unknown-offer"),
                (#"{"offer":"promotional","productId":"pro.yearly","offerIdentifier":"COMEBACK"}"#, "unknown-offer"),
                (#"{"offer":"introductory","productId":"pro","environment":"Xcode"}"#, "bad-environment"),
                ("not json", "bad-body"),
            ] {
                let (status, json) = try await Self.post(client, key: key, user: "user-1", body)
                #expect(status == .badRequest && json["error"] as? String == code, "\(body): \(json)")
            }
        }
        let keyFile = try Self.file(Self.key.privateKey.pemRepresentation)
        let error = #expect(throws: SettingsError.self, "an offer key without a catalog stops the service") {
            try CustomerAPISettings(
                EnvironmentSettings([
                    "DATABASE_URL": "postgres://u@127.0.0.1/db", "APPSTORE_OFFER_KEY_FILE": keyFile,
                    "APPSTORE_OFFER_KEY_ID": "K", "APPSTORE_OFFER_ISSUER_ID": "issuer-1",
                ]))
        }
        #expect(error?.description.contains("APPSTORE_OFFER_CATALOG_FILE") == true, "\(String(describing: error))")
        #expect(throws: SettingsError.self, "a product in two groups") {
            try CustomerAPISettings.offerCatalog(
                EnvironmentSettings([
                    "APPSTORE_OFFER_CATALOG_FILE": try Self.file(#"{"a": {"G1": {"p": []}, "G2": {"p": []}}}"#)
                ]))
        }
        try await self.withAPI(offers: nil) { client, key in
            let (status, json) = try await Self.post(
                client, key: key, user: "user-1", #"{"offer":"introductory","productId":"pro"}"#)
            #expect(status == .serviceUnavailable && json["error"] as? String == "not-configured")
        }
    }

    /// A temporary file holding `text`; its path.
    static func file(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: url)
        return url.path
    }
}
