public import AppStoreModels
import Foundation
public import JWSVerification
public import ServiceRuntime
public import X509

/// The roots and StoreKit certificates signed data must chain to: `APPSTORE_ROOT_CERTIFICATES` (DER or PEM
/// files, comma-separated; default Apple Root CA G3) and `APPSTORE_STOREKIT_CERTIFICATES`.
public struct TrustSettings: Sendable {
    /// Roots for Production and Sandbox chains.
    public var trustedRoots: [Certificate] = [AppleRootCertificates.rootCAG3]
    /// StoreKit test certificates for Xcode and LocalTesting.
    public var storeKitTestCertificates: [Certificate] = []

    /// Apple's root only.
    public init() {}

    /// Reads the two variables.
    public init(_ settings: EnvironmentSettings) throws {
        let roots = try settings.list("APPSTORE_ROOT_CERTIFICATES").map(Self.loadCertificate)
        if !roots.isEmpty { self.trustedRoots = roots }
        self.storeKitTestCertificates = try settings.list("APPSTORE_STOREKIT_CERTIFICATES").map(Self.loadCertificate)
    }

    /// One verifier per environment, all sharing the apps and these certificates.
    public func makeVerifiers(for accepted: AcceptedApps) throws -> [Environment: SignedDataVerifier] {
        var verifiers: [Environment: SignedDataVerifier] = [:]
        for environment in accepted.environments {
            verifiers[environment] = SignedDataVerifier(
                configuration: try VerifierConfiguration(
                    environment: environment, apps: accepted.apps, trustedRoots: self.trustedRoots,
                    storeKitTestCertificates: self.storeKitTestCertificates))
        }
        return verifiers
    }

    /// Reads a DER or PEM certificate file.
    static func loadCertificate(_ path: String) throws -> Certificate {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingsError("cannot read certificate \(path)")
        }
        return try CertificateLoading.certificate(from: Array(data), source: path)
    }
}
