import AppStoreAPI
import AsyncHTTPClient
import Foundation
import Logging
import NotificationPipeline
import ServiceRuntime

/// The App Store Server API as the recovery commands reach it: the same environment variables as the
/// services (`APPSTORE_APPS`, `APPSTORE_ROOT_CERTIFICATES`, `APPSTORE_API_*`), inline retries on.
struct APIAccess {
    let http: HTTPClient
    let client: AppStoreServerAPIClient

    /// Builds the client from the process environment (or the given settings, in tests).
    static func make(_ settings: EnvironmentSettings = .process, logger: Logger) throws -> APIAccess {
        let accepted = try AcceptedApps(settings)
        let trust = try TrustSettings(settings)
        let api = try AppStoreAPISettings(settings, accepted: accepted)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let client = try api.makeClient(http: http, verifiers: try trust.makeVerifiers(for: accepted), logger: logger)
            return APIAccess(http: http, client: client)
        } catch {
            try? http.syncShutdown()
            throw error
        }
    }

    /// Runs `body` with a client, shutting the HTTP client down afterwards.
    static func with<T>(_ settings: EnvironmentSettings = .process, logger: Logger, _ body: (AppStoreServerAPIClient) async throws -> T) async throws -> T {
        let access = try Self.make(settings, logger: logger)
        do {
            let result = try await body(access.client)
            try await access.http.shutdown()
            return result
        } catch {
            try? await access.http.shutdown()
            throw error
        }
    }

    /// `--bootstrap-servers`, or `KAFKA_BOOTSTRAP_SERVERS`, or 127.0.0.1:9092.
    static func bootstrapServers(_ option: String?, _ settings: EnvironmentSettings = .process) -> [String] {
        option.map { $0.split(separator: ",").map(String.init) } ?? settings.list("KAFKA_BOOTSTRAP_SERVERS", default: ["127.0.0.1:9092"])
    }
}
