import AppStoreAPI
import AppStoreModels
import AppStoreSigning
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Crypto
import Entitlements
import Foundation
import JWSVerification
import Logging
import NIOCore
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Prometheus
import RdKafka
import ServiceLifecycle
import ServiceRuntime
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// Who may bind a purchase (the trust rules of CustomerAPIPurchaseTests, against the same stack): strangers are refused
/// purchases owned through a token or a binding, a purchase nobody owns is bound only on its buyer's fresh device proof,
/// and a transfer needs the device's verification.
extension CustomerAPIPurchaseTests {
    /// The attack of the trust-boundaries issue: a stranger with the app's key and ids read off the owner's receipt.
    /// A purchase owned through its appAccountToken (never posted by its owner, so with no binding row), and one its
    /// owner claimed after the app team declared the token, are refused with 409 by id, by receipt and by an old
    /// signed transaction; the owners keep their access and nothing is bound to the stranger.
    @Test func strangersCannotClaimPurchasesOwnedThroughATokenOrABinding() async throws {
        try await Self.withStack { stack in
            let owned = Self.activePurchases(stack.sim, .autoRenewableSubscription).filter {
                $0.transactions.last?.appAccountToken != nil
            }
            try #require(owned.count >= 2, "the scenario has subscriptions bought with an appAccountToken")
            let (claimed, unclaimed) = (owned[0], owned[1])
            #expect(try await stack.declareToken(of: claimed, for: "owner") == 201)
            #expect(try await stack.declareToken(of: claimed, for: "owner") == 200, "declaring again is harmless")
            #expect(
                try await stack.declareToken(of: claimed, for: "stranger") == 409, "a token belongs to one app user")
            let newest = try stack.sim.simulator.signer.signTransaction(claimed.transactions.last!)
            #expect(try await stack.post("owner", #"{"signedTransaction":""# + newest + #""}"#).0 == 200)
            #expect(try await stack.activeProducts("owner") == [claimed.productId])

            for purchase in [claimed, unclaimed] {
                let oldest = try stack.sim.simulator.signer.signTransaction(purchase.transactions.first!)
                let id = purchase.transactions.first!.transactionId!
                for body in [
                    #"{"transactionId":""# + id + #""}"#, #"{"appReceipt":""# + SimHarness.legacyReceipt(id) + #""}"#,
                    #"{"signedTransaction":""# + oldest + #""}"#,
                ] {
                    let (status, answer) = try await stack.post("stranger", body)
                    #expect(
                        status == 409 && answer["error"] as? String == "owned-by-another-customer",
                        "\(body.prefix(40)): \(status) \(answer)")
                }
            }
            #expect(try await stack.activeProducts("owner") == [claimed.productId], "the owner keeps access")
            #expect(try await stack.activeProducts("stranger") == [])
            let bindings = try await stack.written().bindings
            #expect(
                bindings == [claimed.originalTransactionId: "owner"], "nothing is bound to the stranger: \(bindings)")
        }
    }

    /// The attack of trust round two: a purchase with no appAccountToken that nobody has claimed yet (known from
    /// notifications only). A stranger with its ids claims it by id, by receipt, by an old signed transaction, with a
    /// stale device proof, with a stale AppTransaction and with the AppTransaction of another account: each refused,
    /// nothing bound. Its buyer's fresh device proof binds it.
    @Test func aPurchaseNobodyOwnsIsBoundOnlyOnItsBuyersFreshDeviceProof() async throws {
        try await Self.withStack { stack in
            let unowned = Self.activePurchases(stack.sim, .autoRenewableSubscription).filter {
                $0.transactions.last?.appAccountToken == nil
            }
            try #require(unowned.count >= 2, "the scenario has subscriptions bought without an appAccountToken")
            let (purchase, other) = (unowned[0], unowned[1])
            let id = purchase.transactions.first!.transactionId!
            let oldest = try stack.sim.simulator.signer.signTransaction(purchase.transactions.first!)
            for body in [
                #"{"transactionId":""# + id + #""}"#, #"{"appReceipt":""# + SimHarness.legacyReceipt(id) + #""}"#,
                #"{"signedTransaction":""# + oldest + #""}"#,
            ] {
                let (status, answer) = try await stack.post("stranger", body)
                #expect(
                    status == 409 && answer["error"] as? String == "device-proof-required",
                    "\(body.prefix(40)): \(status) \(answer)")
            }
            // The buyer's device's proofs, signed an hour ago (a log's, a backup's): refused.
            let device = UUID().uuidString, nonce = UUID().uuidString.lowercased()
            var handed = purchase.transactions.last!
            handed.deviceVerificationNonce = nonce
            handed.deviceVerification = Data(SHA384.hash(data: Data((nonce + device.lowercased()).utf8)))
                .base64EncodedString()
            let hourAgo = Date().addingTimeInterval(-3600)
            let oldHanded = try stack.sim.simulator.signer.signTransaction(handed, now: hourAgo)
            let oldApp = try stack.sim.simulator.signer.signAppTransaction(
                for: purchase, environment: purchase.environment, device: device, now: hourAgo)
            let refusals: [(String, Int, String)] = [
                (
                    #"{"signedTransaction":""# + oldHanded + #"","deviceVerificationId":""# + device + #""}"#, 403,
                    "stale-device-proof"
                ),
                (
                    #"{"transactionId":""# + id + #"","signedAppTransaction":""# + oldApp
                        + #"","deviceVerificationId":""#
                        + device + #""}"#, 403, "stale-device-proof"
                ),
                // The stranger's own account's fresh AppTransaction names another appTransactionId.
                (
                    try stack.proven(#"{"transactionId":""# + id + #""}"#, by: other, device: device), 403,
                    "app-transaction-mismatch"
                ),
                // A fresh AppTransaction of the buyer's account with another device's id.
                (
                    #"{"transactionId":""# + id + #"","signedAppTransaction":""#
                        + (try stack.sim.simulator.signer.signAppTransaction(
                            for: purchase, environment: purchase.environment, device: device))
                        + #"","deviceVerificationId":""# + UUID().uuidString + #""}"#, 403, "device-verification-failed"
                ),
                (#"{"transactionId":""# + id + #"","signedAppTransaction":"a.b.c"}"#, 400, "bad-body"),
                (
                    #"{"transactionId":""# + id + #"","signedAppTransaction":"a.b.c","deviceVerificationId":""# + device
                        + #""}"#, 400, "invalid-signed-app-transaction"
                ),
            ]
            for (body, expected, code) in refusals {
                let (status, answer) = try await stack.post("stranger", body)
                #expect(status == expected && answer["error"] as? String == code, "\(code): \(status) \(answer)")
            }
            #expect(try await stack.activeProducts("stranger") == [])
            #expect(try await stack.written().bindings.isEmpty, "nothing is bound to anyone")

            // The buyer, from the device, with the transaction StoreKit hands it now.
            let fresh = try stack.sim.simulator.signer.signTransaction(handed)
            let (bound, boundBody) = try await stack.post(
                "buyer", #"{"signedTransaction":""# + fresh + #"","deviceVerificationId":""# + device + #""}"#)
            #expect(bound == 200, "\(boundBody)")
            #expect(try await stack.activeProducts("buyer") == [purchase.productId])
            #expect(try await stack.written().bindings == [purchase.originalTransactionId: "buyer"])
            let (late, lateBody) = try await stack.post("stranger", #"{"transactionId":""# + id + #""}"#)
            #expect(late == 409 && lateBody["error"] as? String == "owned-by-another-customer", "\(lateBody)")
        }
    }

    /// Under `CUSTOMER_TRANSFER_POLICY=transfer` a purchase moves only on the device's proof: StoreKit 2's signed
    /// transaction with the device's verification id. Without one it is 409, with a wrong one 403; with the right
    /// one it moves and an `entitlement.customer-changed` event says from whom to whom.
    @Test func aTransferNeedsTheDevicesVerification() async throws {
        try await Self.withStack(policy: .transfer) { stack in
            let purchase = try #require(
                Self.activePurchases(stack.sim, .autoRenewableSubscription).first {
                    $0.transactions.last?.appAccountToken == nil
                })
            let device = UUID().uuidString, nonce = UUID().uuidString.lowercased()
            var handed = purchase.transactions.last!
            handed.deviceVerificationNonce = nonce
            handed.deviceVerification = Data(SHA384.hash(data: Data((nonce + device.lowercased()).utf8)))
                .base64EncodedString()
            let signed = try stack.sim.simulator.signer.signTransaction(handed)
            let body = #"{"signedTransaction":""# + signed + #"""#
            #expect(try await stack.post("old-owner", try stack.proven(body + "}", by: purchase)).0 == 200)
            let (missing, missingBody) = try await stack.post("new-owner", body + "}")
            #expect(missing == 409 && missingBody["error"] as? String == "owned-by-another-customer", "\(missingBody)")
            let (wrong, wrongBody) = try await stack.post(
                "new-owner", body + #","deviceVerificationId":""# + UUID().uuidString + #""}"#)
            #expect(wrong == 403 && wrongBody["error"] as? String == "device-verification-failed", "\(wrongBody)")
            let id = purchase.transactions.last!.transactionId!
            let (idWithProof, _) = try await stack.post(
                "new-owner", #"{"transactionId":""# + id + #"","deviceVerificationId":""# + device + #""}"#)
            #expect(idWithProof == 400, "no device signed an API answer")
            // The same device's proof, from a transaction signed an hour ago (a log's, a support ticket's): refused.
            let old = try stack.sim.simulator.signer.signTransaction(handed, now: Date().addingTimeInterval(-3600))
            let (stale, staleBody) = try await stack.post(
                "new-owner", #"{"signedTransaction":""# + old + #"","deviceVerificationId":""# + device + #""}"#)
            #expect(stale == 403 && staleBody["error"] as? String == "stale-device-proof", "\(staleBody)")
            #expect(try await stack.activeProducts("old-owner") == [purchase.productId], "refused claims moved nothing")

            let (moved, movedBody) = try await stack.post(
                "new-owner", body + #","deviceVerificationId":""# + device + #""}"#)
            #expect(moved == 200, "\(movedBody)")
            #expect(try await stack.activeProducts("new-owner") == [purchase.productId])
            #expect(try await stack.activeProducts("old-owner") == [], "nothing stays active twice")
            let logger = Self.logger
            let (events, proofs) = try await DatabaseClient.with(
                try DatabaseSettings(url: stack.databaseURL), logger: logger
            ) { client in
                var events: [String] = [], proofs: [String?] = []
                for try await payload in try await client.query(
                    "SELECT payload::text FROM outbox WHERE payload->>'eventType' = 'entitlement.customer-changed'",
                    logger: logger
                ).decode(String.self) {
                    events.append(payload)
                }
                for try await proof in try await client.query(
                    "SELECT transfer_proof FROM customer_bindings", logger: logger
                ).decode(String?.self) {
                    proofs.append(proof)
                }
                return (events, proofs)
            }
            // The event as the updater wrote it (the outbox keeps its bytes): read as JSON, not as a spelling.
            let event = events.first.flatMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
            #expect(events.count == 1 && event?["previousCustomer"] as? String == "old-owner", "\(events)")
            #expect(events.first?.contains("new-owner") == true)
            #expect(proofs == ["device"])
        }
    }
}
