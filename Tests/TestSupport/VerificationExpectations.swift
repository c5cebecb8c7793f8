public import JWSVerification
import Testing

/// Runs a verification and returns the error it failed with, or nil when it succeeded.
///
/// Anything thrown that is not a ``VerificationError`` (a broken fixture, say) is recorded as a test
/// failure, so a test can never pass by accident on the wrong error.
public func verificationError<T>(
    _ body: () async throws -> T, sourceLocation: SourceLocation = #_sourceLocation
) async -> VerificationError? {
    do {
        _ = try await body()
        return nil
    } catch let error as VerificationError {
        return error
    } catch {
        Issue.record("expected a VerificationError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
