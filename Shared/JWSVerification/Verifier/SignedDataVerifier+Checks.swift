import AppStoreModels

// MARK: - SignedDataVerifier + App, environment and consistency checks

extension SignedDataVerifier {
    /// Finds the configured app for a payload's identifiers.
    ///
    /// The bundle identifier must be a configured app's. The App Store app identifier must match the
    /// configured one whenever both are known, and is required in Production from payloads that carry the
    /// field (notifications, app transactions; a transaction has no `appAppleId` field at all).
    func checkApp(bundleId: String?, appAppleId: Int64?, carriesAppAppleId: Bool = true) throws(VerificationError)
        -> AppIdentity
    {
        guard let bundleId else { throw VerificationError(.appIdentifier, "the payload has no bundleId") }
        guard let app = self.configuredApp(bundleId) else {
            throw VerificationError(.appIdentifier, "bundleId \(bundleId) is not a configured app")
        }
        if let expected = app.appAppleId {
            if let appAppleId, appAppleId != expected {
                throw VerificationError(
                    .appIdentifier, "appAppleId \(appAppleId) is not \(expected), the appAppleId of \(bundleId)")
            }
            if appAppleId == nil && carriesAppAppleId && self.configuration.environment == .production {
                throw VerificationError(.appIdentifier, "the payload has no appAppleId, which Production requires")
            }
        }
        return app
    }

    /// Requires the payload's environment to be the one this verifier serves.
    func checkEnvironment(_ rawEnvironment: String?) throws(VerificationError) {
        let expected = self.configuration.environment.rawValue
        guard rawEnvironment == expected else {
            throw VerificationError(
                .environment,
                "the payload is for \(rawEnvironment ?? "no environment"), this verifier serves \(expected)")
        }
    }

    /// Requires the nested transaction and renewal information to describe the same subscription.
    static func checkConsistency(_ notification: VerifiedNotification) throws(VerificationError) {
        guard let transaction = notification.transaction, let renewalInfo = notification.renewalInfo,
            let transactionOriginal = transaction.originalTransactionId,
            let renewalOriginal = renewalInfo.originalTransactionId
        else { return }
        guard transactionOriginal == renewalOriginal else {
            throw VerificationError(
                .format,
                "the renewal info is for originalTransactionId \(renewalOriginal), the transaction for \(transactionOriginal)"
            )
        }
    }
}
