public import AppStoreModels
public import Foundation

/// Where and how the client calls the App Store Server API.
public struct AppStoreAPIConfiguration: Sendable {
    /// Apple's production host (recommended since 2026-05-05).
    public static let appleProductionURL = URL(string: "https://api.storekit.apple.com")!
    /// Apple's sandbox host.
    public static let appleSandboxURL = URL(string: "https://api.storekit-sandbox.apple.com")!

    /// The environment calls go to first: Production or Sandbox.
    public var environment: Environment
    /// The production base URL (configurable for the App Store stand-in).
    public var productionURL: URL
    /// The sandbox base URL.
    public var sandboxURL: URL
    /// Whether a production 4040010 (transaction id not found) is asked again of sandbox, as Apple advises
    /// when the environment of a transaction is not known.
    public var sandboxFallback: Bool
    /// Inline retries.
    public var retry: RetryPolicy
    /// The deadline of one HTTP request.
    public var requestTimeout: Duration
    /// Paces every call under Apple's per-app, per-endpoint rate limits (nil: calls go at once; a 429 is then
    /// the retry policy's to handle).
    public var pacer: APIRequestPacer?

    public init(
        environment: Environment, productionURL: URL = Self.appleProductionURL, sandboxURL: URL = Self.appleSandboxURL,
        sandboxFallback: Bool = false, retry: RetryPolicy = RetryPolicy(), requestTimeout: Duration = .seconds(30),
        pacer: APIRequestPacer? = nil
    ) {
        self.pacer = pacer
        self.environment = environment
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.sandboxFallback = sandboxFallback
        self.retry = retry
        self.requestTimeout = requestTimeout
    }

    /// The base URL of an environment (anything but Sandbox uses production's).
    public func baseURL(for environment: Environment) -> URL {
        environment == .sandbox ? self.sandboxURL : self.productionURL
    }
}
