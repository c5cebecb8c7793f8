import AppStoreAPI
import AppStoreModels
import Entitlements
import Foundation
import HTTPTypes
import PipelineRecords

/// The buyer's device's proof that a purchase is theirs, from a POST body's `deviceVerificationId` beside either
/// StoreKit 2's signed transaction or a signed AppTransaction (``PurchaseBody``). Both carry Apple's
/// `deviceVerification`, the SHA-384 of a nonce and the device's `AppStore.deviceVerificationID`, and both must be
/// fresh: StoreKit signs them when the app asks, so a device always has a new one, while an old one (a log's, a
/// support ticket's, a backup's) proves only that someone once had it.
struct DeviceProofs: Sendable {
    /// Verifies a signed AppTransaction with the verifier of the environment it claims.
    let verifyAppTransaction: @Sendable (String) async throws(PurchaseRefusal) -> AppTransaction

    /// How old a signed transaction or AppTransaction may be to prove its device's possession.
    static let maximumAge: TimeInterval = 10 * 60
    /// How far ahead of this server's clock one may be dated (clocks differ a little).
    static let clockSkew: TimeInterval = 60

    // MARK: The proof a body carries

    /// The proof the body carries for `transactions`, or nil without `deviceVerificationId`.
    ///
    /// - 400 `bad-body`: `deviceVerificationId` beside an id or receipt with no `signedAppTransaction` (no device
    ///   signed an API answer), or a `signedAppTransaction` without `deviceVerificationId`.
    /// - 403 `device-verification-failed`: the hash does not match; `app-transaction-mismatch`: the AppTransaction
    ///   names another `appTransactionId` than a claimed transaction (or one lacks it); `stale-device-proof`:
    ///   signed more than ``maximumAge`` before `now`.
    func proof(_ body: PurchaseBody, transactions: [VerifiedTransaction], now: Date = Date())
        async throws(PurchaseRefusal) -> TransferProof?
    {
        guard let id = body.deviceVerificationId else {
            guard body.signedAppTransaction == nil else {
                throw PurchaseRefusal(
                    status: .badRequest, code: "bad-body",
                    message: "signedAppTransaction proves a device only with its deviceVerificationId")
            }
            return nil
        }
        if let signed = body.signedAppTransaction {
            return try Self.appTransactionProof(
                try await self.verifyAppTransaction(signed), verificationId: id,
                transactions: transactions.map(\.transaction), now: now)
        }
        guard body.signedTransaction != nil, let transaction = transactions.first?.transaction else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-body",
                message: "deviceVerificationId goes with signedTransaction, or with signedAppTransaction")
        }
        return try Self.transactionProof(transaction, verificationId: id, now: now)
    }

    // MARK: Checks (no I/O)

    /// StoreKit 2's signed transaction as proof: its hash matches the device's id and it is fresh.
    static func transactionProof(_ transaction: JWSTransactionDecodedPayload, verificationId: String, now: Date)
        throws(PurchaseRefusal) -> TransferProof
    {
        guard TransferProof.deviceVerifies(transaction, verificationId: verificationId) else {
            throw Self.mismatch("transaction's")
        }
        try Self.requireFresh(signed: transaction.signedDate?.date, what: "signed transaction", now: now)
        return .device(verificationId: verificationId)
    }

    /// A signed AppTransaction as proof for `transactions`: each names its `appTransactionId` (app and environment), its hash matches the
    /// device's id, and it is fresh (`receiptCreationDate`, when the App Store signed it).
    static func appTransactionProof(
        _ app: AppTransaction, verificationId: String, transactions: [JWSTransactionDecodedPayload], now: Date
    ) throws(PurchaseRefusal) -> TransferProof {
        guard let appTransactionId = app.appTransactionId, !appTransactionId.isEmpty,
            transactions.allSatisfy({
                $0.appTransactionId == appTransactionId && $0.bundleId == app.bundleId
                    && $0.rawEnvironment == app.rawReceiptType
            })
        else {
            throw PurchaseRefusal(
                status: .forbidden, code: "app-transaction-mismatch",
                message:
                    "the AppTransaction's appTransactionId, app or environment is not the one every claimed transaction carries"
            )
        }
        var probe = JWSTransactionDecodedPayload()
        probe.deviceVerification = app.deviceVerification
        probe.deviceVerificationNonce = app.deviceVerificationNonce
        guard TransferProof.deviceVerifies(probe, verificationId: verificationId) else {
            throw Self.mismatch("AppTransaction's")
        }
        try Self.requireFresh(signed: app.receiptCreationDate?.date, what: "AppTransaction", now: now)
        return .appTransaction(verificationId: verificationId, appTransactionId: appTransactionId)
    }

    /// 403 `device-verification-failed`.
    private static func mismatch(_ whose: String) -> PurchaseRefusal {
        PurchaseRefusal(
            status: .forbidden, code: "device-verification-failed",
            message: "the device verification id does not match the \(whose) deviceVerification")
    }

    /// 403 `stale-device-proof` unless `signed` is at most ``maximumAge`` before `now` (and at most ``clockSkew``
    /// after it).
    static func requireFresh(signed: Date?, what: String, now: Date) throws(PurchaseRefusal) {
        let age = now.timeIntervalSince(signed ?? .distantPast)
        guard age <= Self.maximumAge, age >= -Self.clockSkew else {
            throw PurchaseRefusal(
                status: .forbidden, code: "stale-device-proof",
                message: "the \(what) was signed \(Int(age)) s ago; a device proof must be at most "
                    + "\(Int(Self.maximumAge)) s old: send the one StoreKit gives the app now")
        }
    }
}
