public import AppStoreModels

extension DecodedRealtimeRequestBody: SignedPayload {
    public static var kindName: String { "real-time request" }
    public var signingTime: Timestamp? { self.signedDate }
}

// MARK: - SignedDataVerifier + Retention Messaging real-time requests

extension SignedDataVerifier {
    /// Verifies the `signedPayload` of a Retention Messaging real-time request as a notification is verified (chain
    /// to a trusted root with Apple's marker OIDs, ES256, at its signing time), then requires a configured app's
    /// `appAppleId` (the request names no bundle id, so an app without a configured appAppleId cannot be matched) and
    /// this verifier's environment. Returns the request and the app it is for.
    public func verifyRealtimeRequest(_ signedPayload: String) async throws(VerificationError)
        -> (request: DecodedRealtimeRequestBody, app: AppIdentity)
    {
        let request = try await self.verifySignedData(signedPayload.utf8, as: DecodedRealtimeRequestBody.self)
        guard let appAppleId = request.appAppleId else {
            throw VerificationError(.appIdentifier, "the real-time request has no appAppleId")
        }
        guard let app = self.configuration.apps.first(where: { $0.appAppleId == appAppleId }) else {
            throw VerificationError(.appIdentifier, "appAppleId \(appAppleId) is not a configured app's")
        }
        try self.checkEnvironment(request.rawEnvironment)
        guard request.originalTransactionId?.isEmpty == false, request.requestIdentifier?.isEmpty == false else {
            throw VerificationError(.format, "the real-time request lacks originalTransactionId or requestIdentifier")
        }
        return (request, app)
    }
}
