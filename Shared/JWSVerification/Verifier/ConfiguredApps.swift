// MARK: - SignedDataVerifier + Configured apps

extension SignedDataVerifier {
    /// The configured app with this bundle identifier, if any.
    func configuredApp(_ bundleId: String) -> AppIdentity? {
        self.configuration.apps.first { $0.bundleId == bundleId }
    }
}
