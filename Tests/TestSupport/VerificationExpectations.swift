public import JWSVerification

/// Runs a verification and returns the error it failed with, or nil when it succeeded.
public func verificationError<T>(
    _ body: () async throws(VerificationError) -> T
) async -> VerificationError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}
