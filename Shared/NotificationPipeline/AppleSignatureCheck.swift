public import AppStoreModels
public import JWSVerification
public import PipelineRecords
public import ServiceRuntime

/// The entitlement-updater's own check of Apple's signature on a verified notification: the chain-verifier's
/// record carries Apple's `signedPayload` in the `apple-signed-payload` header, the updater verifies its outer
/// signature (one ES256 check, the chain cached) and requires the record to hold exactly what Apple signed. So a
/// record-signing key alone (a stolen chain-verifier key included) cannot invent or alter a notification.
///
/// `UPDATER_APPLE_SIGNATURE_CHECK`: `required` (the default) or `off`. Required, it reads the apps and roots the
/// chain-verifier reads (`APPSTORE_APPS`, `APPSTORE_ENVIRONMENTS`, `APPSTORE_ROOT_CERTIFICATES`,
/// `APPSTORE_STOREKIT_CERTIFICATES`); the OCSP checks stay with the chain-verifier.
public struct AppleSignatureCheck: Sendable {
    let verifiers: [Environment: SignedDataVerifier]

    /// A check with one verifier per accepted environment.
    public init(verifiers: [Environment: SignedDataVerifier]) {
        self.verifiers = verifiers
    }

    /// The check `UPDATER_APPLE_SIGNATURE_CHECK` asks for: nil when `off`; the service does not start with another
    /// value or without the apps and roots it needs.
    public static func configured(_ settings: EnvironmentSettings) throws -> AppleSignatureCheck? {
        let mode = settings.string("UPDATER_APPLE_SIGNATURE_CHECK", default: "required")
        switch mode {
        case "off":
            return nil
        case "required":
            var trust = try TrustSettings(settings)
            trust.onlineChecks = false
            return AppleSignatureCheck(verifiers: try trust.makeVerifiers(for: try AcceptedApps(settings)))
        default:
            throw SettingsError("UPDATER_APPLE_SIGNATURE_CHECK must be required or off, not \(mode)")
        }
    }

    // MARK: Checking

    /// Why a verified-notification record is not what Apple signed.
    public enum Refusal: Error, CustomStringConvertible, Hashable, Sendable {
        /// The record carries no `apple-signed-payload` header.
        case missing
        /// The header is not a notification Apple signed for an accepted app and environment.
        case notApple(String)
        /// Apple signed another notification than the record holds.
        case differs

        public var description: String {
            switch self {
            case .missing:
                "the verified notification carries no \(PipelineHeaders.appleSignedPayload) header to check Apple's signature on"
            case .notApple(let detail): "Apple's signature does not hold: \(detail)"
            case .differs: "the record differs from the notification Apple signed"
            }
        }
    }

    /// Checks a record against the signed payload it carries: nil when Apple signed it for the record's environment
    /// and the record holds exactly that notification (read at the record's source), else why not. Throws only a
    /// retryable error (the batch is tried again).
    public func refusal(of record: VerifiedNotificationRecord, signedPayload: [UInt8]?) async throws(VerificationError)
        -> Refusal?
    {
        guard let signedPayload, !signedPayload.isEmpty else { return .missing }
        guard let environment = Environment(rawValue: record.environment), let verifier = self.verifiers[environment]
        else { return .notApple("no verifier for environment \(record.environment)") }
        let apple: VerifiedNotification
        do {
            apple = try await verifier.verifyNotificationOuterSignature(String(decoding: signedPayload, as: UTF8.self))
        } catch  where error.isRetryable {
            throw error
        } catch {
            return .notApple("\(error.kind.rawValue): \(error.detail)")
        }
        return VerifiedNotificationRecord(notification: apple, source: record.source) == record ? nil : .differs
    }
}
