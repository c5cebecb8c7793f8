public import AppStoreModels
public import AppStoreSigning
public import JWSVerification
public import X509

/// Builders for valid signed data under a generated test PKI, which tests then break in one way each.
public struct SignedFixtures: Sendable {
    /// The hierarchy that signs valid data.
    public let pki: TestPKI
    /// A signer with that hierarchy's leaf key and chain.
    public let signer: AppStoreSigner

    /// The bundle identifier of the test app.
    public static let bundleId = "com.example.app"
    /// The App Store identifier of the test app.
    public static let appAppleId: Int64 = 1_234_567
    /// A signing time inside the default PKI validity (2023-11-14T22:13:20Z).
    public static let signedDate = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    /// Creates fixtures under a new PKI with the given options.
    public init(_ options: TestPKI.Options = TestPKI.Options()) throws {
        self.pki = try TestPKI(options)
        self.signer = AppStoreSigner(pki: self.pki)
    }

    /// A verifier trusting this PKI's root for the test app.
    public func verifier(
        environment: Environment = .sandbox,
        validationTime: ValidationTime = .signedDate,
        chainCacheCapacity: Int = 32,
        onlineChecks: OnlineChecks? = nil
    ) throws -> SignedDataVerifier {
        SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: environment,
                apps: [AppIdentity(bundleId: Self.bundleId, appAppleId: Self.appAppleId)],
                trustedRoots: [self.pki.root],
                validationTime: validationTime,
                chainCacheCapacity: chainCacheCapacity, onlineChecks: onlineChecks))
    }

    // MARK: Payloads

    /// A DID_RENEW notification payload for the test app.
    public static func notification(
        environment: Environment = .sandbox, signedDate: Timestamp = Self.signedDate
    ) -> ResponseBodyV2DecodedPayload {
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationType = .didRenew
        payload.notificationUUID = "6b2a6f1e-3c1d-4e55-9f0a-1b2c3d4e5f60"
        payload.version = "2.0"
        payload.signedDate = signedDate
        var data = NotificationData()
        data.environment = environment
        data.appAppleId = Self.appAppleId
        data.bundleId = Self.bundleId
        data.bundleVersion = "42"
        data.status = .active
        payload.data = data
        return payload
    }

    /// A renewal transaction of the test app's subscription.
    public static func transaction(
        environment: Environment = .sandbox, signedDate: Timestamp = Self.signedDate, bundleId: String = Self.bundleId
    ) -> JWSTransactionDecodedPayload {
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "2000000000000002"
        transaction.originalTransactionId = "2000000000000001"
        transaction.bundleId = bundleId
        transaction.productId = "com.example.app.pro.monthly"
        transaction.type = .autoRenewableSubscription
        transaction.inAppOwnershipType = .purchased
        transaction.transactionReason = .renewal
        transaction.environment = environment
        transaction.signedDate = signedDate
        transaction.purchaseDate = signedDate
        transaction.expiresDate = Timestamp(millisecondsSince1970: signedDate.millisecondsSince1970 + 2_592_000_000)
        transaction.price = 9_990
        transaction.currency = "USD"
        return transaction
    }

    /// Renewal information of the test app's subscription.
    public static func renewalInfo(
        environment: Environment = .sandbox, signedDate: Timestamp = Self.signedDate
    ) -> JWSRenewalInfoDecodedPayload {
        var renewalInfo = JWSRenewalInfoDecodedPayload()
        renewalInfo.originalTransactionId = "2000000000000001"
        renewalInfo.productId = "com.example.app.pro.monthly"
        renewalInfo.autoRenewProductId = "com.example.app.pro.monthly"
        renewalInfo.autoRenewStatus = .on
        renewalInfo.environment = environment
        renewalInfo.signedDate = signedDate
        return renewalInfo
    }

    /// A fully signed DID_RENEW notification with nested transaction and renewal info.
    public func signedNotification(
        environment: Environment = .sandbox, signedDate: Timestamp = Self.signedDate
    ) throws -> String {
        try self.signer.signNotification(
            Self.notification(environment: environment, signedDate: signedDate),
            transaction: Self.transaction(environment: environment, signedDate: signedDate),
            renewalInfo: Self.renewalInfo(environment: environment, signedDate: signedDate))
    }
}
