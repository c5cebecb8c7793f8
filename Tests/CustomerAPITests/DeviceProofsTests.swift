import AppStoreModels
import Crypto
import Foundation
import PipelineRecords
import Testing

@testable import CustomerAPI

/// The device proofs' checks without a server: hash, account, app, environment and age.
@Suite struct DeviceProofsTests {
    static let device = "4F7C0E2A-9B1D-4C3E-8A5F-6D2B7E9C1A04"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A nonce and the hash of it with `device` (lowercased), as StoreKit computes `deviceVerification`.
    static func verification(for device: String) -> (nonce: String, hash: String) {
        let nonce = UUID().uuidString.lowercased()
        return (nonce, Data(SHA384.hash(data: Data((nonce + device.lowercased()).utf8))).base64EncodedString())
    }

    /// An AppTransaction of account 7001 handed to ``device``, signed `age` seconds before ``now``.
    static func appTransaction(age: TimeInterval = 30) -> AppTransaction {
        var app = AppTransaction()
        let (nonce, hash) = Self.verification(for: Self.device)
        app.deviceVerificationNonce = nonce
        app.deviceVerification = hash
        app.appTransactionId = "7001"
        app.bundleId = "com.example.app"
        app.receiptType = .sandbox
        app.receiptCreationDate = Timestamp(Self.now.addingTimeInterval(-age))
        return app
    }

    /// A transaction of `account` in the app and environment of ``appTransaction(age:)``.
    static func transaction(account: String? = "7001") -> JWSTransactionDecodedPayload {
        var transaction = JWSTransactionDecodedPayload()
        transaction.appTransactionId = account
        transaction.bundleId = "com.example.app"
        transaction.environment = .sandbox
        return transaction
    }

    /// The refusal code of a check, or nil when it passed.
    static func code(_ check: () throws(PurchaseRefusal) -> TransferProof) -> String? {
        do {
            _ = try check()
            return nil
        } catch { return error.code }
    }

    @Test func anAppTransactionProvesItsOwnAccountsPurchasesWhileFresh() throws {
        let app = Self.appTransaction()
        let proof = try DeviceProofs.appTransactionProof(
            app, verificationId: Self.device.lowercased(), transactions: [Self.transaction(), Self.transaction()],
            now: Self.now)
        #expect(proof == .appTransaction(verificationId: Self.device.lowercased(), appTransactionId: "7001"))
        #expect(proof.holds(for: Self.transaction()))
        var otherApp = Self.transaction()
        otherApp.bundleId = "com.example.other"
        var production = Self.transaction()
        production.environment = .production
        let cases: [(AppTransaction, String, [JWSTransactionDecodedPayload], String)] = [
            (app, Self.device, [Self.transaction(), Self.transaction(account: "7002")], "app-transaction-mismatch"),
            (app, Self.device, [Self.transaction(account: nil)], "app-transaction-mismatch"),
            (app, Self.device, [otherApp], "app-transaction-mismatch"),
            (app, Self.device, [production], "app-transaction-mismatch"),
            (app, UUID().uuidString, [Self.transaction()], "device-verification-failed"),
            (Self.appTransaction(age: 601), Self.device, [Self.transaction()], "stale-device-proof"),
            (Self.appTransaction(age: -61), Self.device, [Self.transaction()], "stale-device-proof"),
        ]
        for (app, device, transactions, expected) in cases {
            #expect(
                Self.code { () throws(PurchaseRefusal) in
                    try DeviceProofs.appTransactionProof(
                        app, verificationId: device, transactions: transactions, now: Self.now)
                } == expected, "\(expected)")
        }
        var unsigned = Self.appTransaction()
        unsigned.receiptCreationDate = nil
        #expect(
            Self.code { () throws(PurchaseRefusal) in
                try DeviceProofs.appTransactionProof(
                    unsigned, verificationId: Self.device, transactions: [Self.transaction()], now: Self.now)
            } == "stale-device-proof", "no signing date is no proof of freshness")
    }

    @Test func aSignedTransactionProvesItsDeviceWhileFresh() {
        var transaction = Self.transaction()
        (transaction.deviceVerificationNonce, transaction.deviceVerification) = Self.verification(for: Self.device)
        transaction.signedDate = Timestamp(Self.now.addingTimeInterval(-599))
        #expect(
            Self.code { () throws(PurchaseRefusal) in
                try DeviceProofs.transactionProof(transaction, verificationId: Self.device, now: Self.now)
            } == nil)
        transaction.signedDate = Timestamp(Self.now.addingTimeInterval(-601))
        #expect(
            Self.code { () throws(PurchaseRefusal) in
                try DeviceProofs.transactionProof(transaction, verificationId: Self.device, now: Self.now)
            } == "stale-device-proof")
        #expect(
            Self.code { () throws(PurchaseRefusal) in
                try DeviceProofs.transactionProof(transaction, verificationId: UUID().uuidString, now: Self.now)
            } == "device-verification-failed")
    }
}
