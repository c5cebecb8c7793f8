import AppStoreModels
import AppStoreSigning
import Crypto
import Foundation

/// Signs what the stand-in sends: notifications (with their nested transaction, renewal info or app
/// transaction) and the signed items of API answers, with the sim's own Apple-shaped PKI.
@_spi(Testing) public struct SimSigner: Sendable {
    @_spi(Testing) public let signer: AppStoreSigner
    let bundleId: String
    let appAppleId: Int64

    /// The compact JWS of a notification.
    @_spi(Testing) public func sign(_ n: SimNotification) throws -> String {
        var payload = ResponseBodyV2DecodedPayload()
        payload.rawNotificationType = n.type
        payload.rawSubtype = n.subtype
        payload.notificationUUID = n.uuid
        payload.version = "2.0"
        payload.signedDate = Timestamp(millisecondsSince1970: n.signedDate)
        switch n.container {
        case .data:
            var data = NotificationData()
            data.environment = n.environment
            data.appAppleId = self.appAppleId
            data.bundleId = self.bundleId
            data.bundleVersion = "1"
            data.status = n.status
            if n.type == "CONSUMPTION_REQUEST" { data.rawConsumptionRequestReason = "UNINTENDED_PURCHASE" }
            payload.data = data
        case .summary:
            var summary = n.summary ?? Summary()
            summary.environment = n.environment
            summary.appAppleId = self.appAppleId
            summary.bundleId = self.bundleId
            if n.summary == nil {
                summary.productId = ScenarioGenerator.subscriptionProduct
                summary.requestIdentifier = n.uuid
                summary.storefrontCountryCodes = ["USA"]
                summary.succeededCount = 3
                summary.failedCount = 0
            }
            payload.summary = summary
        case .externalPurchaseToken:
            var token = ExternalPurchaseToken()
            token.externalPurchaseId = (n.environment == .sandbox ? "SANDBOX_" : "") + n.uuid
            token.tokenCreationDate = Timestamp(millisecondsSince1970: n.signedDate - 10 * ScenarioGenerator.day)
            token.appAppleId = self.appAppleId
            token.bundleId = self.bundleId
            token.tokenType = .services
            payload.externalPurchaseToken = token
        case .appData:
            var appData = AppData()
            appData.appAppleId = self.appAppleId
            appData.bundleId = self.bundleId
            appData.environment = n.environment
            payload.appData = appData
        }
        let appTransaction: AppTransaction? =
            n.container == .appData ? self.appTransaction(at: n.signedDate, environment: n.environment) : nil
        return try self.signer.signNotification(
            payload, transaction: n.transaction, renewalInfo: n.renewal, appTransaction: appTransaction)
    }

    /// A transaction as an API answer carries it: signed now.
    @_spi(Testing) public func signTransaction(_ transaction: JWSTransactionDecodedPayload, now: Date = Date()) throws
        -> String
    {
        var transaction = transaction
        transaction.signedDate = Timestamp(now)
        return try self.signer.sign(transaction)
    }

    /// Renewal info as an API answer carries it: signed now.
    func signRenewal(_ renewal: JWSRenewalInfoDecodedPayload, now: Date = Date()) throws -> String {
        var renewal = renewal
        renewal.signedDate = Timestamp(now)
        return try self.signer.sign(renewal)
    }

    /// The app transaction RESCIND_CONSENT carries.
    private func appTransaction(at signedDate: Int64, environment: Environment) -> AppTransaction {
        var app = AppTransaction()
        app.receiptType = environment
        app.appAppleId = self.appAppleId
        app.bundleId = self.bundleId
        app.applicationVersion = "1"
        app.receiptCreationDate = Timestamp(millisecondsSince1970: signedDate)
        app.originalPurchaseDate = Timestamp(millisecondsSince1970: signedDate - 30 * ScenarioGenerator.day)
        app.originalApplicationVersion = "1"
        app.appTransactionId = "705000000000\(signedDate % 1000)"
        return app
    }
}

// MARK: - Retention Messaging

extension SimSigner {
    /// A real-time request as the App Store signs it when a customer opens the subscription's cancel screen.
    func signRealtimeRequest(
        originalTransactionId: String, productId: String, userLocale: String, environment: Environment,
        requestIdentifier: String = UUID().uuidString.lowercased(), now: Date = Date()
    ) throws -> String {
        var request = DecodedRealtimeRequestBody()
        request.originalTransactionId = originalTransactionId
        request.appAppleId = self.appAppleId
        request.productId = productId
        request.userLocale = userLocale
        request.requestIdentifier = requestIdentifier
        request.signedDate = Timestamp(now)
        request.environment = environment
        return try self.signer.sign(request)
    }
}

// MARK: - App transactions

extension SimSigner {
    /// The app transaction of a purchase's customer, as Get App Transaction Info signs it now: the app bought or
    /// downloaded a day before the first purchase; its appTransactionId is the customer's (``SimAppTransactionIds``).
    /// With `device` (its `AppStore.deviceVerificationID`), it is the one StoreKit hands that device
    /// (`AppTransaction.shared`): its `deviceVerification` is SHA-384 of a fresh nonce and the device's id.
    @_spi(Testing) public func signAppTransaction(
        for purchase: SimPurchase, environment: Environment, device: String? = nil, now: Date = Date()
    ) throws -> String {
        var app = AppTransaction()
        if let device {
            let nonce = UUID().uuidString.lowercased()
            app.deviceVerificationNonce = nonce
            app.deviceVerification = Data(SHA384.hash(data: Data((nonce + device.lowercased()).utf8)))
                .base64EncodedString()
        }
        app.receiptType = environment
        app.appAppleId = self.appAppleId
        app.bundleId = self.bundleId
        app.applicationVersion = "1"
        app.originalApplicationVersion = "1"
        app.receiptCreationDate = Timestamp(now)
        let first = purchase.transactions.first?.originalPurchaseDate?.millisecondsSince1970 ?? 0
        app.originalPurchaseDate = Timestamp(millisecondsSince1970: first - ScenarioGenerator.day)
        app.appTransactionId = SimAppTransactionIds.appTransactionId(forOriginal: purchase.originalTransactionId)
        return try self.signer.sign(app)
    }
}
