import AppStoreAPI
import AppStoreModels
import Entitlements
import Foundation
import HTTPTypes
import JWSVerification
import NotificationPipeline
import PipelineRecords

/// The body of `POST /v1/apps/{bundleId}/customers/{appUserId}/transactions`: exactly one of the three.
struct PurchaseBody: Decodable {
    /// StoreKit 2's `Transaction.jwsRepresentation`.
    var signedTransaction: String?
    /// A transaction id (StoreKit 2's `Transaction.id`, or StoreKit 1's `transactionIdentifier`).
    var transactionId: String?
    /// StoreKit 1's app receipt, base64.
    var appReceipt: String?
    /// Production or Sandbox for ids and receipts (default: Production, then Sandbox when Apple does not know the id).
    var environment: String?
    /// The device's `AppStore.deviceVerificationID`, beside `signedTransaction` or `signedAppTransaction`: the
    /// proof that binds a purchase nobody owns yet, or moves one under `CUSTOMER_TRANSFER_POLICY=transfer`
    /// (``DeviceProofs``).
    var deviceVerificationId: String?
    /// StoreKit 2's `AppTransaction.shared` JWS, signed in the last minutes: with `deviceVerificationId`, proof for
    /// the claimed transactions whose `appTransactionId` it names, whichever of the three inputs named them.
    var signedAppTransaction: String?
}

/// Why a POST is refused: an HTTP status, a stable code and a message (the JSON error body).
struct PurchaseRefusal: Error {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    /// Seconds, for 503 answers the client should retry.
    var retryAfter: Int?
}

/// Turns a POST body into verified purchases: a JWS verified as a notification's nested JWS is (chain to the
/// configured roots, Apple's marker OIDs, ES256, app and environment), ids and receipts resolved through the
/// App Store Server API (whose answers are verified the same way). Nothing is written here.
struct PurchaseIntake: Sendable {
    let verifiers: [Environment: SignedDataVerifier]
    let purchaseImport: PurchaseImport?

    /// The verified transactions the body names, all of app `bundleId`.
    func transactions(_ body: PurchaseBody, bundleId: String) async throws(PurchaseRefusal) -> (
        AppPurchaseRecord.Source, [VerifiedTransaction]
    ) {
        let given = [body.signedTransaction, body.transactionId, body.appReceipt].compactMap { $0 }
        guard given.count == 1 else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-body",
                message: "send exactly one of signedTransaction, transactionId, appReceipt")
        }
        var environment: Environment?
        if let name = body.environment {
            guard let named = Environment(rawValue: name), named.isAppStoreServer else {
                throw PurchaseRefusal(
                    status: .badRequest, code: "bad-environment", message: "environment must be Production or Sandbox")
            }
            environment = named
        }
        let result: (AppPurchaseRecord.Source, [VerifiedTransaction])
        if let signed = body.signedTransaction {
            result = (.signedTransaction, [try await self.verify(signed)])
        } else if let id = body.transactionId {
            guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw PurchaseRefusal(
                    status: .badRequest, code: "bad-transaction-id",
                    message: "a transaction id is 1 to 64 letters or digits")
            }
            let purchaseImport = try self.requireAPI()
            // A subscription's id may name an old period: its history (every page) brings the newest one too.
            result = (
                .transactionId,
                try await Self.asking { () async throws(AppStoreAPIError) in
                    let found = try await purchaseImport.transaction(id, bundleId: bundleId, environment: environment)
                    guard found.transaction.type == .autoRenewableSubscription else { return [found] }
                    return try await purchaseImport.history(
                        of: [id], bundleId: bundleId, environment: found.transaction.environment ?? environment)
                }
            )
        } else {
            guard
                let ids = AppReceipt.transactionIds(fromBase64: body.appReceipt ?? "")
                    ?? LegacyReceipt.transactionId(fromBase64: body.appReceipt ?? "").map({ [$0] })
            else {
                throw PurchaseRefusal(
                    status: .badRequest, code: "bad-receipt", message: "appReceipt is not a base64 app receipt")
            }
            guard !ids.isEmpty else {
                throw PurchaseRefusal(
                    status: .unprocessableContent, code: "empty-receipt",
                    message: "the receipt holds no in-app purchase")
            }
            let purchaseImport = try self.requireAPI()
            result = (
                .appReceipt,
                try await Self.asking { () async throws(AppStoreAPIError) in
                    try await purchaseImport.history(of: ids, bundleId: bundleId, environment: environment)
                }
            )
        }
        for item in result.1 where item.transaction.bundleId != bundleId {
            throw PurchaseRefusal(
                status: .forbidden, code: "wrong-app-transaction",
                message: "the transaction belongs to \(item.transaction.bundleId ?? "no app"), not \(bundleId)")
        }
        return result
    }

    /// Verifies a signed transaction with the verifier of the environment it claims: 400
    /// `invalid-signed-transaction` when it does not verify.
    private func verify(_ signed: String) async throws(PurchaseRefusal) -> VerifiedTransaction {
        try await self.verified(
            signed, as: JWSTransactionDecodedPayload.self, claiming: \.environment, code: "invalid-signed-transaction",
            what: "signed transaction"
        ) { VerifiedTransaction(signed: signed, transaction: try await $0.verifyTransaction(signed)) }
    }

    /// Verifies a signed AppTransaction with the verifier of the environment it claims: 400
    /// `invalid-signed-app-transaction` when it does not verify.
    func verifyAppTransaction(_ signed: String) async throws(PurchaseRefusal) -> AppTransaction {
        try await self.verified(
            signed, as: AppTransaction.self, claiming: \.receiptType, code: "invalid-signed-app-transaction",
            what: "signed AppTransaction"
        ) { try await $0.verifyAppTransaction(signed) }
    }

    /// Runs `verify` with the verifier of the environment `signed`'s payload claims (read unverified; that verifier
    /// checks the claim): 400 `code` when no accepted environment's verifier takes it or it does not verify.
    private func verified<Payload: Decodable, Value>(
        _ signed: String, as type: Payload.Type, claiming environment: (Payload) -> Environment?, code: String,
        what: String, _ verify: (SignedDataVerifier) async throws -> Value
    ) async throws(PurchaseRefusal) -> Value {
        let claimed = (try? UnverifiedJWS(signed).decodePayload(as: type)).flatMap(environment)
        guard let claimed, let verifier = self.verifiers[claimed] else {
            throw PurchaseRefusal(
                status: .badRequest, code: code, message: "not a \(what) of an accepted environment")
        }
        do {
            return try await verify(verifier)
        } catch {
            throw PurchaseRefusal(status: .badRequest, code: code, message: "verification failed: \(error)")
        }
    }

    /// The importer, or 503 when no App Store Server API key is configured.
    private func requireAPI() throws(PurchaseRefusal) -> PurchaseImport {
        guard let purchaseImport = self.purchaseImport else {
            throw PurchaseRefusal(
                status: .serviceUnavailable, code: "not-configured",
                message: "transaction ids and receipts need an App Store Server API key (APPSTORE_API_KEY_FILE)")
        }
        return purchaseImport
    }

    /// Runs an API call, turning Apple's answers into refusals: unknown ids 404, Apple unavailable 503.
    private static func asking<T>(_ call: () async throws(AppStoreAPIError) -> T) async throws(PurchaseRefusal) -> T {
        do {
            return try await call()
        } catch {
            if error.status == 404 || error.errorCode == APIErrorCode.transactionIdNotFound
                || error.errorCode == 4_040_010
            {
                throw PurchaseRefusal(
                    status: .notFound, code: "unknown-transaction",
                    message: "the App Store does not know this transaction")
            }
            if error.isRetryable {
                let wait = error.retryAfter.map { max(1, Int($0.timeIntervalSinceNow.rounded(.up))) } ?? 5
                throw PurchaseRefusal(
                    status: .serviceUnavailable, code: "app-store-unavailable", message: "\(error)", retryAfter: wait)
            }
            throw PurchaseRefusal(status: .badGateway, code: "app-store-error", message: "\(error)")
        }
    }
}
