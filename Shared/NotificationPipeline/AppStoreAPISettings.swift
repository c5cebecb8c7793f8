public import AppStoreAPI
public import AppStoreModels
import AsyncHTTPClient
import Foundation
import JWSVerification
import Logging
public import ServiceRuntime

/// How services and `iapctl` reach the App Store Server API (see docs/configuration.md):
/// `APPSTORE_API_KEY_FILE` (the `.p8`), `APPSTORE_API_KEY_ID`, `APPSTORE_API_ISSUER_ID`,
/// `APPSTORE_API_BUNDLE_ID` (default: the first of `APPSTORE_APPS`), `APPSTORE_API_ENVIRONMENT`
/// (default Production), `APPSTORE_API_URL_PRODUCTION`, `APPSTORE_API_URL_SANDBOX`,
/// `APPSTORE_API_SANDBOX_FALLBACK` (default false), `APPSTORE_API_TIMEOUT_MS` (default 30000) and `APPSTORE_API_APPS`
/// (the bundle ids the key may call for; default every app of `APPSTORE_APPS`).
///
/// Every call names the app it is about (the token's `bid`) and goes to the environment its data came from;
/// `APPSTORE_API_BUNDLE_ID` and `APPSTORE_API_ENVIRONMENT` are only the defaults of calls that name neither.
public struct AppStoreAPISettings: Sendable {
    public var credentials: APICredentials
    public var configuration: AppStoreAPIConfiguration
    /// The apps the key calls the API for (nil: every accepted app).
    public var apps: [String]?

    /// The (app, environment) pairs the periodic and bulk calls (reconciler, backfill, test notifications) cover.
    public func scopes(_ accepted: AcceptedApps) -> [APIScope] {
        accepted.apiScopes.filter { self.apps?.contains($0.bundleId) ?? true }
    }

    public init(credentials: APICredentials, configuration: AppStoreAPIConfiguration) {
        self.credentials = credentials
        self.configuration = configuration
    }

    /// Reads the variables; `accepted` supplies the default bundle identifier.
    public init(_ settings: EnvironmentSettings, accepted: AcceptedApps) throws {
        let keyPath = try settings.requiredString("APPSTORE_API_KEY_FILE")
        guard let pem = FileManager.default.contents(atPath: keyPath).map({ String(decoding: $0, as: UTF8.self) })
        else {
            throw SettingsError("APPSTORE_API_KEY_FILE: cannot read \(keyPath)")
        }
        let bundleID = settings.string("APPSTORE_API_BUNDLE_ID", default: accepted.apps.first?.bundleId ?? "")
        do {
            self.credentials = try APICredentials(
                keyID: try settings.requiredString("APPSTORE_API_KEY_ID"),
                issuerID: try settings.requiredString("APPSTORE_API_ISSUER_ID"),
                bundleID: bundleID, pkcs8PEM: pem)
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError("APPSTORE_API_KEY_FILE: \(keyPath) is not a PKCS#8 P-256 key (\(error))")
        }
        let apps = settings.list("APPSTORE_API_APPS", default: [])
        self.apps = apps.isEmpty ? nil : apps
        let environmentName = settings.string("APPSTORE_API_ENVIRONMENT", default: "Production")
        guard let environment = Environment(rawValue: environmentName), environment.isAppStoreServer else {
            throw SettingsError("APPSTORE_API_ENVIRONMENT must be Production or Sandbox, not \(environmentName)")
        }
        self.configuration = AppStoreAPIConfiguration(
            environment: environment,
            productionURL: try Self.url(
                settings, "APPSTORE_API_URL_PRODUCTION", default: AppStoreAPIConfiguration.appleProductionURL),
            sandboxURL: try Self.url(
                settings, "APPSTORE_API_URL_SANDBOX", default: AppStoreAPIConfiguration.appleSandboxURL),
            sandboxFallback: try settings.bool("APPSTORE_API_SANDBOX_FALLBACK", default: false),
            requestTimeout: try settings.milliseconds("APPSTORE_API_TIMEOUT_MS", default: .seconds(30)))
    }

    /// A URL variable.
    private static func url(_ settings: EnvironmentSettings, _ name: String, default defaultValue: URL) throws -> URL {
        let text = settings.string(name, default: defaultValue.absoluteString)
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw SettingsError("\(name) must be an http(s) URL, not \(text)")
        }
        return url
    }
}

// MARK: - Building the client

extension AppStoreAPISettings {
    /// A client with these credentials and endpoints, verifying answers with `verifiers`.
    public func makeClient(
        http: HTTPClient, verifiers: [Environment: SignedDataVerifier], retry: RetryPolicy? = nil,
        logger: Logger
    ) throws -> AppStoreServerAPIClient {
        var configuration = self.configuration
        if let retry { configuration.retry = retry }
        return AppStoreServerAPIClient(
            http: http, tokens: try APITokenFactory(credentials: self.credentials), configuration: configuration,
            verifiers: verifiers,
            logger: logger)
    }
}
