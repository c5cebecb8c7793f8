public import AppStoreModels
import Crypto
import Foundation
import SwiftASN1
import X509

/// Verifies and decodes everything the App Store signs: notifications (with every nested JWS),
/// transactions, renewal information and app transactions, under one ``VerifierConfiguration``.
///
/// A JWS is accepted only when it is a compact ES256 JWS whose `x5c` chain leads to a configured root under
/// the App Store rules at the validation time, whose raw r‖s signature verifies with the leaf key, and whose
/// app and environment are the configured ones. Chains are cached, so a chain seen before costs one P-256
/// signature check per JWS. Thread-safe; share one instance.
public final class SignedDataVerifier: Sendable {
    /// What this verifier accepts.
    public let configuration: VerifierConfiguration
    private let validator: ChainValidator
    private let cache: HeaderCache<VerifiedChain>
    private let issuers: KnownIssuers
    /// The configured apps by bundle identifier (the first wins if one is listed twice).
    private let apps: [String: AppIdentity]

    /// Creates a verifier for a configuration.
    public init(configuration: VerifierConfiguration) {
        self.configuration = configuration
        self.validator = ChainValidator(configuration: configuration)
        self.cache = HeaderCache(capacity: configuration.chainCacheCapacity)
        self.issuers = KnownIssuers(capacity: configuration.chainCacheCapacity)
        self.apps = Dictionary(configuration.apps.map { ($0.bundleId, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The configured app with this bundle identifier, if any.
    func configuredApp(_ bundleId: String) -> AppIdentity? {
        self.apps[bundleId]
    }

    /// How many verified chains are cached now.
    public var cachedChainCount: Int { self.cache.count }

    /// How many intermediates are known (validated up to a configured root), so chains under them cost one leaf check.
    public var knownIssuerCount: Int { self.issuers.count }

    /// Validates `intermediates` up to the configured roots now and knows them from then on (the services' warm start:
    /// the first chain under one, after a start or a leaf rotation, costs one leaf check and no new-chain budget).
    /// Throws for one that does not validate: a bad setting stops the service at start.
    public func warm(intermediates: [Certificate]) async throws(VerificationError) {
        for intermediate in intermediates {
            let issuer = try await self.validator.validateIntermediate(intermediate, at: Date())
            var der = DER.Serializer()
            do { try der.serialize(intermediate) } catch {
                throw VerificationError(.certificate, "the intermediate \(intermediate.subject) cannot be encoded")
            }
            self.issuers.insert(issuer, encoded: Data(der.serializedBytes).base64EncodedString())
        }
    }

    // MARK: Public entry points

    /// Verifies a notification's `signedPayload` and every JWS nested in it.
    public func verifyNotification(_ signedPayload: String) async throws(VerificationError) -> VerifiedNotification {
        try await self.verifyNotificationKeepingJSON(signedPayload).notification
    }

    /// Verifies a notification like ``verifyNotification(_:)`` and also returns the JSON of its payload and of
    /// each nested JWS exactly as Apple signed it, so a caller can pass it on without encoding the decoded values
    /// again.
    public func verifyNotificationKeepingJSON(_ signedPayload: String) async throws(VerificationError)
        -> (notification: VerifiedNotification, json: VerifiedJSON)
    {
        let (payload, payloadJSON, app) = try await self.verifyEnvelope(signedPayload)
        var verified = VerifiedNotification(signedPayload: signedPayload, payload: payload)
        var json = VerifiedJSON(payload: payloadJSON)
        if let signed = payload.data?.signedTransactionInfo {
            (verified.transaction, json.transaction) = try await self.verifyNestedTransaction(signed, app: app)
        }
        if let signed = payload.data?.signedRenewalInfo {
            do {
                (verified.renewalInfo, json.renewalInfo) = try await self.checkedRenewalInfo(signed)
            } catch {
                throw error.nested(in: "data.signedRenewalInfo")
            }
        }
        if let signed = payload.appData?.signedAppTransactionInfo {
            do {
                (verified.appTransaction, json.appTransaction) = try await self.checkedAppTransaction(
                    signed, expecting: app)
            } catch {
                throw error.nested(in: "appData.signedAppTransactionInfo")
            }
        }
        try Self.checkConsistency(verified)
        return (verified, json)
    }

    /// Verifies a notification's outer JWS only (chain, Apple's markers, signature, one container, app and
    /// environment), not the JWS nested in it: what ingest checks at the edge before anything is stored. The
    /// chain-verifier still verifies everything. The JWS was split and its payload decoded by ingest's
    /// structural checks (``UnverifiedJWS/decodeNotification()``); neither is done a second time.
    public func verifyNotificationEnvelope(_ notification: UnverifiedNotification) async throws(VerificationError)
        -> ResponseBodyV2DecodedPayload
    {
        _ = try await self.verifyNotificationSignatureOnly(notification)
        _ = try self.checkEnvelope(notification.payload)
        return notification.payload
    }

    /// Verifies only that the App Store signed a notification's outer JWS (chain, Apple's markers, signature, one
    /// container), whatever app and environment it names: a genuine notification of an app or environment not
    /// configured yet is parked (`unknown-app`, `unknown-environment`) to be replayed once it is, while a forgery is
    /// still refused. Throws ``VerificationError`` of the chain or signature kinds like the full check.
    public func verifyNotificationSignatureOnly(_ notification: UnverifiedNotification) async throws(VerificationError)
        -> ResponseBodyV2DecodedPayload
    {
        try self.requireStoreKitTestCertificate()
        try await self.verify(
            notification.jws, payload: notification.payload,
            cached: self.cache.value(forHeader: notification.jws.header))
        try Self.requireOneContainer(notification.payload)
        return notification.payload
    }

    /// Verifies a notification's outer JWS (chain, signature, one container, app and environment) and decodes the
    /// JWS nested in it without checking their own signatures: Apple's outer signature covers their text, so
    /// what they decode to is what Apple sent. This is the entitlement-updater's second look at a notification the
    /// chain-verifier verified in full: one signature check (the chain cached), and the values the record must
    /// hold.
    public func verifyNotificationOuterSignature(_ signedPayload: String) async throws(VerificationError)
        -> VerifiedNotification
    {
        let (payload, _, _) = try await self.verifyEnvelope(signedPayload)
        var verified = VerifiedNotification(signedPayload: signedPayload, payload: payload)
        if let signed = payload.data?.signedTransactionInfo {
            verified.transaction = try Self.decodeCovered(signed, at: "data.signedTransactionInfo")
        }
        if let signed = payload.data?.signedRenewalInfo {
            verified.renewalInfo = try Self.decodeCovered(signed, at: "data.signedRenewalInfo")
        }
        if let signed = payload.appData?.signedAppTransactionInfo {
            verified.appTransaction = try Self.decodeCovered(signed, at: "appData.signedAppTransactionInfo")
        }
        return verified
    }

    /// The payload of a JWS nested in a verified one, decoded without checking its own signature.
    private static func decodeCovered<Payload: SignedPayload>(_ signed: String, at field: String)
        throws(VerificationError) -> Payload
    {
        do {
            return try Self.decode(try CompactJWS(signed.utf8).decodedPayload())
        } catch {
            throw error.nested(in: field)
        }
    }

    /// Whether the chain of this notification's JWS was verified before and is cached (its verification then
    /// costs one signature check), or its intermediate is known (one leaf check more): lets a caller bound the work
    /// spent on chains it has not seen.
    public func knowsChain(of notification: UnverifiedNotification) -> Bool {
        self.knowsChain(header: notification.jws.header)
    }

    /// Whether a header's chain is cached, or its intermediate is known so that only its leaf needs a check.
    private func knowsChain(header: ArraySlice<UInt8>) -> Bool {
        if self.cache.value(forHeader: header) != nil { return true }
        guard let x5c = (try? JWSHeader.decode(segment: header))?.x5c, x5c.count == 3 else { return false }
        return self.issuers.issuer(encoded: x5c[1]) != nil
    }

    /// Whether the chain of a compact JWS (a real-time request, say) was verified before and is cached, or its
    /// intermediate is known; false for text that is no compact JWS.
    public func knowsChain(ofJWS signed: String) -> Bool {
        guard let jws = try? CompactJWS(signed.utf8) else { return false }
        return self.knowsChain(header: jws.header)
    }

    /// The outer JWS of a notification, verified, with its JSON and its configured app.
    private func verifyEnvelope(_ signedPayload: String) async throws(VerificationError)
        -> (payload: ResponseBodyV2DecodedPayload, json: [UInt8], app: AppIdentity)
    {
        let (payload, json) = try await self.verifySignedJSON(signedPayload.utf8, as: ResponseBodyV2DecodedPayload.self)
        return (payload, json, try self.checkEnvelope(payload))
    }

    /// A notification carries exactly one of `data`, `summary`, `externalPurchaseToken` and `appData`.
    private static func requireOneContainer(_ payload: ResponseBodyV2DecodedPayload) throws(VerificationError) {
        guard payload.containerCount == 1 else {
            throw VerificationError(
                .format,
                "a notification carries exactly one of data, summary, externalPurchaseToken and appData, "
                    + "found \(payload.containerCount)")
        }
    }

    /// The envelope rules after the signature: exactly one container, a configured app and environment.
    private func checkEnvelope(_ payload: ResponseBodyV2DecodedPayload) throws(VerificationError) -> AppIdentity {
        try Self.requireOneContainer(payload)
        let app = try self.checkApp(bundleId: payload.bundleId, appAppleId: payload.appAppleId)
        try self.checkEnvironment(payload.rawEnvironment)
        return app
    }

    /// Verifies a signed transaction (`signedTransactionInfo`, or one from the App Store Server API).
    public func verifyTransaction(_ signedTransaction: String) async throws(VerificationError)
        -> JWSTransactionDecodedPayload
    {
        try await self.checkedTransaction(signedTransaction).value
    }

    /// Verifies signed renewal information. It names no app, so only its environment is checked.
    public func verifyRenewalInfo(_ signedRenewalInfo: String) async throws(VerificationError)
        -> JWSRenewalInfoDecodedPayload
    {
        try await self.checkedRenewalInfo(signedRenewalInfo).value
    }

    /// Verifies a signed app transaction.
    public func verifyAppTransaction(_ signedAppTransaction: String) async throws(VerificationError) -> AppTransaction {
        try await self.checkedAppTransaction(signedAppTransaction, expecting: nil).value
    }

    // MARK: Checked payloads with their JSON

    /// A signed transaction, verified and checked, with its decoded JSON.
    private func checkedTransaction(_ signed: String) async throws(VerificationError) -> (
        value: JWSTransactionDecodedPayload, json: [UInt8]
    ) {
        let (transaction, json) = try await self.verifySignedJSON(signed.utf8, as: JWSTransactionDecodedPayload.self)
        _ = try self.checkApp(bundleId: transaction.bundleId, appAppleId: nil, carriesAppAppleId: false)
        try self.checkEnvironment(transaction.rawEnvironment)
        return (transaction, json)
    }

    /// Signed renewal information, verified and checked, with its decoded JSON.
    private func checkedRenewalInfo(_ signed: String) async throws(VerificationError) -> (
        value: JWSRenewalInfoDecodedPayload, json: [UInt8]
    ) {
        let (renewalInfo, json) = try await self.verifySignedJSON(signed.utf8, as: JWSRenewalInfoDecodedPayload.self)
        try self.checkEnvironment(renewalInfo.rawEnvironment)
        return (renewalInfo, json)
    }

    /// The transaction nested in a notification, which must belong to the notification's app.
    private func verifyNestedTransaction(_ signed: String, app: AppIdentity) async throws(VerificationError)
        -> (value: JWSTransactionDecodedPayload, json: [UInt8])
    {
        do throws(VerificationError) {
            let checked = try await self.checkedTransaction(signed)
            guard checked.value.bundleId == app.bundleId else {
                throw VerificationError(
                    .appIdentifier,
                    "bundleId \(checked.value.bundleId ?? "(none)") differs from the notification's \(app.bundleId)")
            }
            return checked
        } catch {
            throw error.nested(in: "data.signedTransactionInfo")
        }
    }

    /// An app transaction, verified and checked, optionally required to belong to the notification's app.
    private func checkedAppTransaction(_ signed: String, expecting app: AppIdentity?) async throws(VerificationError)
        -> (value: AppTransaction, json: [UInt8])
    {
        let (appTransaction, json) = try await self.verifySignedJSON(signed.utf8, as: AppTransaction.self)
        let own = try self.checkApp(bundleId: appTransaction.bundleId, appAppleId: appTransaction.appAppleId)
        if let app, own.bundleId != app.bundleId {
            throw VerificationError(
                .appIdentifier, "bundleId \(own.bundleId) differs from the notification's \(app.bundleId)")
        }
        try self.checkEnvironment(appTransaction.rawReceiptType)
        return (appTransaction, json)
    }

    // MARK: The JWS itself

    /// Splits, decodes and cryptographically verifies one JWS, returning its decoded payload.
    ///
    /// The order follows Apple's: the payload is decoded first because its `signedDate` is the validation
    /// time, then the chain is validated (or found in the cache), then the signature is checked.
    func verifySignedData<Payload: SignedPayload>(
        _ text: some Collection<UInt8>, as type: Payload.Type
    ) async throws(VerificationError) -> Payload {
        try await self.verifySignedJSON(text, as: type).value
    }

    /// Like ``verifySignedData(_:as:)``, also returning the payload's JSON bytes the value was decoded from.
    private func verifySignedJSON<Payload: SignedPayload>(
        _ text: some Collection<UInt8>, as type: Payload.Type
    ) async throws(VerificationError) -> (value: Payload, json: [UInt8]) {
        try self.requireStoreKitTestCertificate()
        let jws = try CompactJWS(text)
        let cached = self.cache.value(forHeader: jws.header)
        let certificates = cached == nil ? try self.parseCertificates(jws) : nil
        let json = try jws.decodedPayload()
        let payload: Payload = try Self.decode(json)
        try await self.verify(jws, payload: payload, cached: cached, certificates: certificates)
        return (payload, json)
    }

    /// Refuses everything when the configuration is StoreKit testing without a test certificate.
    private func requireStoreKitTestCertificate() throws(VerificationError) {
        if self.configuration.isStoreKitTesting && self.configuration.storeKitTestCertificates.isEmpty {
            throw VerificationError(
                .environment,
                "\(self.configuration.environment.rawValue) data is verified only against a configured "
                    + "StoreKit test certificate, and none is configured")
        }
    }

    /// Validates the chain of `jws` at the payload's validation time (or takes it from the cache) and checks
    /// the signature over `jws`'s own bytes. `payload` must be the decoding of `jws`'s payload segment.
    private func verify<Payload: SignedPayload>(
        _ jws: CompactJWS, payload: Payload, cached: VerifiedChain?, certificates: ParsedChain? = nil
    ) async throws(VerificationError) {
        let time = self.validationTime(for: payload)
        let chain: VerifiedChain
        if let cached, cached.isValid(at: time), cached.isFresh(now: Date()) {
            chain = cached
        } else {
            let parsed: ParsedChain
            if let certificates { parsed = certificates } else { parsed = try self.parseCertificates(jws) }
            if self.validator.onlineChecks == nil, parsed.encoded.count == 3,
                let issuer = self.issuers.issuer(encoded: parsed.encoded[1]), issuer.isValid(at: time)
            {
                chain = try await self.validator.validateLeaf(parsed.certificates[0], under: issuer, at: time)
            } else {
                let validated = try await self.validator.validate(parsed.certificates, at: time)
                chain = validated.chain
                if let issuer = validated.issuer { self.issuers.insert(issuer, encoded: parsed.encoded[1]) }
            }
            self.cache.insert(chain, forHeader: jws.header)
        }
        let signature = try jws.rawSignature()
        let isValid: Bool
        do {
            isValid = chain.signingKey.isValidSignature(
                try P256.Signing.ECDSASignature(rawRepresentation: signature), for: jws.signingInput)
        } catch {
            throw VerificationError(.signature, "the signature is not a P-256 r‖s pair")
        }
        guard isValid else {
            throw VerificationError(
                .signature, "the \(Payload.kindName) signature does not verify with the leaf certificate's key")
        }
    }

    /// A header's certificates, leaf first, with their `x5c` text.
    struct ParsedChain {
        var certificates: [X509.Certificate]
        var encoded: [String]
    }

    /// Decodes the header of a JWS and parses its certificate chain.
    private func parseCertificates(_ jws: CompactJWS) throws(VerificationError) -> ParsedChain {
        let header = try JWSHeader.decode(segment: jws.header)
        return ParsedChain(certificates: try self.validator.certificates(from: header), encoded: header.x5c ?? [])
    }

    /// Decodes a payload's JSON, failing with a format error.
    private static func decode<Payload: SignedPayload>(_ json: [UInt8]) throws(VerificationError) -> Payload {
        do {
            return try FastJSONDecoder().decode(Payload.self, from: json)
        } catch {
            throw VerificationError(.format, "the payload is not a JSON \(Payload.kindName): \(Self.describe(error))")
        }
    }

    /// The instant certificates must be valid at, for one payload.
    private func validationTime(for payload: some SignedPayload) -> Date {
        switch self.configuration.validationTime {
        case .signedDate: payload.signingTime?.date ?? Date()
        case .now: Date()
        case .fixed(let date): date
        }
    }

    /// A one-line description of a decoding error.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "invalid JSON" }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? "invalid JSON" : "\(path) has the wrong type"
        @unknown default:
            return "invalid JSON"
        }
    }
}
