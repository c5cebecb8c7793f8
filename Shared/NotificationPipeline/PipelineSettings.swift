public import AppStoreModels
public import JWSVerification
import PipelineRecords
public import ServiceRuntime

/// The apps and environments a service accepts: `APPSTORE_APPS` (required) and `APPSTORE_ENVIRONMENTS`
/// (default `Production,Sandbox`).
public struct AcceptedApps: Sendable {
    public var apps: [AppIdentity]
    public var environments: [Environment]

    /// Creates the accepted set.
    public init(apps: [AppIdentity], environments: [Environment] = [.production, .sandbox]) {
        self.apps = apps
        self.environments = environments
    }

    /// Reads `APPSTORE_APPS` and `APPSTORE_ENVIRONMENTS`.
    public init(_ settings: EnvironmentSettings) throws {
        self.apps = try ConfiguredApps.parse(settings.requiredString("APPSTORE_APPS"))
        self.environments = try ConfiguredApps.environments(
            settings.list("APPSTORE_ENVIRONMENTS", default: ["Production", "Sandbox"]))
    }
}

extension AcceptedApps {
    /// Every (app, environment) pair the App Store Server API serves for this configuration: each app in
    /// Production and Sandbox when accepted (Xcode and LocalTesting have no server API).
    public var apiScopes: [APIScope] {
        self.apps.flatMap { app in
            self.environments.filter(\.isAppStoreServer).map { APIScope(bundleId: app.bundleId, environment: $0) }
        }
    }
}

/// One app in one environment: what an App Store Server API call is about (the token's `bid`, the base URL).
public struct APIScope: Hashable, Sendable, CustomStringConvertible {
    public var bundleId: String
    public var environment: Environment

    public init(bundleId: String, environment: Environment) {
        self.bundleId = bundleId
        self.environment = environment
    }

    public var description: String { "\(self.bundleId) (\(self.environment.rawValue))" }
}

extension PipelineTopics {
    /// The default names, each overridable: `TOPIC_RAW`, `TOPIC_VERIFIED`, `TOPIC_REJECTED`,
    /// `TOPIC_STATUS_REQUESTS`, `TOPIC_STATUS_RETRY`, `TOPIC_ENTITLEMENT_CHANGES`, `TOPIC_ENTITLEMENT_FAMILY`, `TOPIC_ENTITLEMENT_REVOCATIONS`,
    /// `TOPIC_RETENTION_OFFERED`.
    public init(_ settings: EnvironmentSettings) {
        self.init()
        self.raw = settings.string("TOPIC_RAW", default: self.raw)
        self.verified = settings.string("TOPIC_VERIFIED", default: self.verified)
        self.rejected = settings.string("TOPIC_REJECTED", default: self.rejected)
        self.statusRequests = settings.string("TOPIC_STATUS_REQUESTS", default: self.statusRequests)
        self.statusRetry = settings.string("TOPIC_STATUS_RETRY", default: self.statusRetry)
        self.entitlementChanges = settings.string("TOPIC_ENTITLEMENT_CHANGES", default: self.entitlementChanges)
        self.entitlementFamily = settings.string("TOPIC_ENTITLEMENT_FAMILY", default: self.entitlementFamily)
        self.entitlementRevocations = settings.string(
            "TOPIC_ENTITLEMENT_REVOCATIONS", default: self.entitlementRevocations)
        self.retentionOffered = settings.string("TOPIC_RETENTION_OFFERED", default: self.retentionOffered)
    }
}
