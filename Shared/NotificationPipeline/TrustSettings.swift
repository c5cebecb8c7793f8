public import AppStoreModels
import AsyncHTTPClient
import Foundation
public import JWSVerification
public import ServiceRuntime
public import X509

/// The roots and StoreKit certificates signed data must chain to: `APPSTORE_ROOT_CERTIFICATES` (DER or PEM
/// files, comma-separated; default Apple Root CA G3), the intermediates the doors know from the start
/// (`APPSTORE_INTERMEDIATE_CERTIFICATES`; default Apple's WWDR G6 with the default root, none with roots of your own)
/// and `APPSTORE_STOREKIT_CERTIFICATES`; and the online
/// revocation checks: `APPSTORE_ONLINE_CHECKS` (`false`), `APPSTORE_OCSP_CACHE_SECONDS` (900),
/// `APPSTORE_OCSP_TIMEOUT_MS` (5000).
public struct TrustSettings: Sendable {
    /// Roots for Production and Sandbox chains.
    public var trustedRoots: [Certificate] = [AppleRootCertificates.rootCAG3]
    /// Intermediates validated at start (``ChainWarmup``), so chains under them cost one leaf check and no new-chain
    /// budget from the first request on; nil: ``warmIntermediates``' default.
    public var intermediates: [Certificate]?

    /// The intermediates to warm: the configured ones, else Apple's built-in ones when the roots are Apple's, else none.
    public var warmIntermediates: [Certificate] {
        self.intermediates
            ?? (self.trustedRoots == [AppleRootCertificates.rootCAG3] ? AppleIntermediateCertificates.all : [])
    }
    /// StoreKit test certificates for Xcode and LocalTesting.
    public var storeKitTestCertificates: [Certificate] = []
    /// Whether every chain is also checked with the OCSP responders its certificates name.
    public var onlineChecks = false
    /// How long a chain cleared by OCSP is trusted before it is checked again.
    public var ocspCacheLifetime: Duration = .seconds(900)
    /// How long one OCSP answer may take (below swift-certificates' own 10-second limit per chain).
    public var ocspTimeout: Duration = .seconds(5)

    /// Apple's root only.
    public init() {}

    /// Reads the variables.
    public init(_ settings: EnvironmentSettings) throws {
        let roots = try settings.list("APPSTORE_ROOT_CERTIFICATES").map(Self.loadCertificate)
        if !roots.isEmpty { self.trustedRoots = roots }
        let intermediates = try settings.list("APPSTORE_INTERMEDIATE_CERTIFICATES").map(Self.loadCertificate)
        if !intermediates.isEmpty { self.intermediates = intermediates }
        self.storeKitTestCertificates = try settings.list("APPSTORE_STOREKIT_CERTIFICATES").map(Self.loadCertificate)
        self.onlineChecks = try settings.bool("APPSTORE_ONLINE_CHECKS", default: false)
        let cacheSeconds = try settings.int("APPSTORE_OCSP_CACHE_SECONDS", default: 900)
        guard (1...86_400).contains(cacheSeconds) else {
            throw SettingsError("APPSTORE_OCSP_CACHE_SECONDS must be 1 to 86400, not \(cacheSeconds)")
        }
        self.ocspCacheLifetime = .seconds(cacheSeconds)
        self.ocspTimeout = try settings.milliseconds("APPSTORE_OCSP_TIMEOUT_MS", default: .seconds(5))
        guard self.ocspTimeout >= .milliseconds(100), self.ocspTimeout <= .seconds(9) else {
            throw SettingsError("APPSTORE_OCSP_TIMEOUT_MS must be 100 to 9000 (one chain's checks end after 10 s)")
        }
    }

    /// The online checks the verifiers run, nil when they are off.
    var onlineChecksConfiguration: OnlineChecks? {
        guard self.onlineChecks else { return nil }
        return OnlineChecks(
            fetcher: HTTPOCSPFetcher(client: HTTPOCSPFetcher.noRedirects, timeout: self.ocspTimeout),
            cacheLifetime: self.ocspCacheLifetime)
    }

    /// One verifier per environment, all sharing the apps and these certificates.
    public func makeVerifiers(for accepted: AcceptedApps) throws -> [Environment: SignedDataVerifier] {
        var verifiers: [Environment: SignedDataVerifier] = [:]
        for environment in accepted.environments {
            verifiers[environment] = SignedDataVerifier(
                configuration: try VerifierConfiguration(
                    environment: environment, apps: accepted.apps, trustedRoots: self.trustedRoots,
                    storeKitTestCertificates: self.storeKitTestCertificates,
                    onlineChecks: self.onlineChecksConfiguration))
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

extension Dictionary where Key == Environment, Value == SignedDataVerifier {
    /// A verifier of Production or Sandbox, for a check of Apple's signature alone (a parked notification of an app or
    /// environment not configured): they all share the roots.
    public var anyAppStoreVerifier: SignedDataVerifier? {
        self.values.first { $0.configuration.environment.isAppStoreServer }
    }
}
