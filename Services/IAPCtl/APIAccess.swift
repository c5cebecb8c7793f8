import AppStoreAPI
import AppStoreModels
import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NotificationPipeline
import RdKafka
import ServiceRuntime

/// The App Store Server API as the recovery commands reach it: the same environment variables as the
/// services (`APPSTORE_APPS`, `APPSTORE_ROOT_CERTIFICATES`, `APPSTORE_API_*`), inline retries on.
struct APIAccess {
    let http: HTTPClient
    let client: AppStoreServerAPIClient
    /// The (app, environment) pairs the key is configured for.
    let configured: [APIScope]

    /// The configured (app, environment) pairs, narrowed to `apps` and `environments` when given (comma-separated).
    func scopes(apps: String?, environments: String?) throws -> [APIScope] {
        let appNames = apps.map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
        let environmentNames = environments.map {
            Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        let scopes = self.configured.filter {
            (appNames?.contains($0.bundleId) ?? true) && (environmentNames?.contains($0.environment.rawValue) ?? true)
        }
        guard !scopes.isEmpty else {
            throw ValidationError(
                "no configured app and environment matches (configured: \(self.configured.map(\.description).joined(separator: ", ")))"
            )
        }
        return scopes
    }

    /// Builds the client from the process environment (or the given settings, in tests).
    static func make(_ settings: EnvironmentSettings = .process, logger: Logger) throws -> APIAccess {
        let accepted = try AcceptedApps(settings)
        let trust = try TrustSettings(settings)
        let api = try AppStoreAPISettings(settings, accepted: accepted)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let client = try api.makeClient(
                http: http, verifiers: try trust.makeVerifiers(for: accepted), logger: logger)
            return APIAccess(http: http, client: client, configured: api.scopes(accepted))
        } catch {
            try? http.syncShutdown()
            throw error
        }
    }

    /// Runs `body` with a client, shutting the HTTP client down afterwards.
    static func with<T>(
        _ settings: EnvironmentSettings = .process, logger: Logger, _ body: (APIAccess) async throws -> T
    ) async throws -> T {
        let access = try Self.make(settings, logger: logger)
        do {
            let result = try await body(access)
            try await access.http.shutdown()
            return result
        } catch {
            try? await access.http.shutdown()
            throw error
        }
    }

    /// The logger of the commands: errors only (their own output is the report).
    static var quietLogger: Logger {
        var logger = Logger(label: "iapctl")
        logger.logLevel = .error
        return logger
    }

    /// A producer to `--bootstrap-servers` (or `KAFKA_BOOTSTRAP_SERVERS`, with the Kafka security settings) for a command, shut down after `body`.
    static func withProducer<T>(
        _ option: String?, clientID: String, logger: Logger, _ body: (KafkaProducer) async throws -> T
    ) async throws -> T {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(client: try KafkaAccess.client(option, clientID: clientID)),
            logger: logger)
        do {
            let result = try await body(producer)
            await producer.shutdown()
            return result
        } catch {
            await producer.shutdown()
            throw error
        }
    }
}
