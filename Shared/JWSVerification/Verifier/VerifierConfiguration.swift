public import AppStoreModels
public import Foundation
public import X509

/// An app whose signed data a verifier accepts.
public struct AppIdentity: Hashable, Sendable {
    /// The app's bundle identifier; every payload must carry exactly this value.
    public var bundleId: String
    /// The app's App Store identifier. Required in Production; when set, payloads carrying one must match it.
    public var appAppleId: Int64?

    /// Creates an app identity.
    public init(bundleId: String, appAppleId: Int64? = nil) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
    }
}

/// The point in time at which certificates must be valid.
public enum ValidationTime: Hashable, Sendable {
    /// The payload's own `signedDate` (an app transaction's `receiptCreationDate`), or now when it has none.
    /// Right for offline verification, replays and backfills: a notification stays verifiable after the
    /// leaf certificate that signed it expires.
    case signedDate
    /// The current time.
    case now
    /// A fixed instant, for audits of old data (`iapctl verify --at`).
    case fixed(Date)
}

/// A configuration that cannot verify anything, found when the verifier is built.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the configuration.
    public var description: String

    /// Creates a configuration error.
    public init(_ description: String) { self.description = description }
}

/// Everything a ``SignedDataVerifier`` checks against. One verifier serves one environment.
public struct VerifierConfiguration: Sendable {
    /// The environment every payload must belong to.
    public var environment: Environment
    /// The apps whose data is accepted.
    public var apps: [AppIdentity]
    /// Roots a Production or Sandbox chain must lead to. Default: Apple Root CA G3 only.
    public var trustedRoots: [Certificate]
    /// StoreKit test certificates ("StoreKit Testing in Xcode") that Xcode and LocalTesting data must be
    /// signed with. Without one, Xcode and LocalTesting data is refused; Production and Sandbox never use them.
    public var storeKitTestCertificates: [Certificate]
    /// When certificates must be valid. Default: ``ValidationTime/signedDate``.
    public var validationTime: ValidationTime
    /// How many verified chains to remember. Default: 32.
    public var chainCacheCapacity: Int
    /// Online revocation checks (OCSP) of every chain; nil (the default): offline, as the App Store's own
    /// libraries default to.
    public var onlineChecks: OnlineChecks?

    /// Creates a configuration, refusing one that could never accept anything or that Apple's rules forbid.
    ///
    /// - Throws: ``ConfigurationError`` when there is no app, no root, a Production app without an
    ///   `appAppleId`, or a non-positive cache capacity.
    public init(
        environment: Environment,
        apps: [AppIdentity],
        trustedRoots: [Certificate] = [AppleRootCertificates.rootCAG3],
        storeKitTestCertificates: [Certificate] = [],
        validationTime: ValidationTime = .signedDate,
        chainCacheCapacity: Int = 32,
        onlineChecks: OnlineChecks? = nil
    ) throws(ConfigurationError) {
        guard !apps.isEmpty else { throw ConfigurationError("at least one app (bundle identifier) is required") }
        if environment == .production, let app = apps.first(where: { $0.appAppleId == nil }) {
            throw ConfigurationError("Production requires the appAppleId of \(app.bundleId)")
        }
        guard chainCacheCapacity > 0 else { throw ConfigurationError("the chain cache needs a positive capacity") }
        if environment.isAppStoreServer {
            guard !trustedRoots.isEmpty else { throw ConfigurationError("at least one trusted root is required") }
        }
        self.environment = environment
        self.apps = apps
        self.trustedRoots = trustedRoots
        self.storeKitTestCertificates = storeKitTestCertificates
        self.validationTime = validationTime
        self.chainCacheCapacity = chainCacheCapacity
        self.onlineChecks = onlineChecks
    }

    /// Whether this configuration serves the StoreKit-testing environments (Xcode, LocalTesting).
    var isStoreKitTesting: Bool { self.environment == .xcode || self.environment == .localTesting }
}
