public import AppStoreModels
public import Foundation
import NIOHTTP1

// MARK: - Retention Messaging API (`/inApps/v1/messaging/…`)

extension AppStoreServerAPIClient {
    /// Upload Image: a PNG under a new identifier (it is then reviewed: `PENDING`, then `APPROVED` or `REJECTED`).
    public func uploadImage(_ id: UUID, png: [UInt8], environment: Environment) async throws(AppStoreAPIError) {
        _ = try await self.send(
            .PUT, "/inApps/v1/messaging/image/\(Self.lower(id))", body: png, contentType: "image/png",
            environment: environment)
    }

    /// Delete Image.
    public func deleteImage(_ id: UUID, environment: Environment) async throws(AppStoreAPIError) {
        _ = try await self.send(.DELETE, "/inApps/v1/messaging/image/\(Self.lower(id))", environment: environment)
    }

    /// Get Image List: every image with its review state.
    public func imageList(environment: Environment) async throws(AppStoreAPIError) -> [ImageListItem] {
        let response: GetImageListResponse = try Self.decode(
            try await self.send(.GET, "/inApps/v1/messaging/image/list", environment: environment))
        return response.imageIdentifiers ?? []
    }

    /// Upload Message: header, body and optional image under a new identifier (reviewed like images).
    public func uploadMessage(_ id: UUID, _ message: UploadMessageRequestBody, environment: Environment)
        async throws(AppStoreAPIError)
    {
        _ = try await self.send(
            .PUT, "/inApps/v1/messaging/message/\(Self.lower(id))", body: try Self.encode(message),
            environment: environment)
    }

    /// Delete Message.
    public func deleteMessage(_ id: UUID, environment: Environment) async throws(AppStoreAPIError) {
        _ = try await self.send(.DELETE, "/inApps/v1/messaging/message/\(Self.lower(id))", environment: environment)
    }

    /// Get Message List: every message with its review state.
    public func messageList(environment: Environment) async throws(AppStoreAPIError) -> [MessageListItem] {
        let response: GetMessageListResponse = try Self.decode(
            try await self.send(.GET, "/inApps/v1/messaging/message/list", environment: environment))
        return response.messageIdentifiers ?? []
    }

    /// Configure Default Message of a product in a locale (the message must be approved).
    public func configureDefaultMessage(
        productId: String, locale: String, messageIdentifier: UUID, environment: Environment
    ) async throws(AppStoreAPIError) {
        _ = try await self.send(
            .PUT, "/inApps/v1/messaging/default/\(Self.escape(productId))/\(Self.escape(locale))",
            body: try Self.encode(DefaultConfigurationRequest(messageIdentifier: Self.lower(messageIdentifier))),
            environment: environment)
    }

    /// Get Default Message of a product in a locale.
    public func defaultMessage(productId: String, locale: String, environment: Environment)
        async throws(AppStoreAPIError) -> String?
    {
        let response: DefaultConfigurationRequest = try Self.decode(
            try await self.send(
                .GET, "/inApps/v1/messaging/default/\(Self.escape(productId))/\(Self.escape(locale))",
                environment: environment))
        return response.messageIdentifier
    }

    /// Delete Default Message of a product in a locale.
    public func deleteDefaultMessage(productId: String, locale: String, environment: Environment)
        async throws(AppStoreAPIError)
    {
        _ = try await self.send(
            .DELETE, "/inApps/v1/messaging/default/\(Self.escape(productId))/\(Self.escape(locale))",
            environment: environment)
    }

    /// Configure Realtime URL (Production's needs a passed performance test first).
    public func configureRealtimeURL(_ url: String, environment: Environment) async throws(AppStoreAPIError) {
        _ = try await self.send(
            .PUT, "/inApps/v1/messaging/realtime/url", body: try Self.encode(RealtimeUrlRequest(realtimeURL: url)),
            environment: environment)
    }

    /// Get Realtime URL.
    public func realtimeURL(environment: Environment) async throws(AppStoreAPIError) -> String? {
        let response: RealtimeUrlRequest = try Self.decode(
            try await self.send(.GET, "/inApps/v1/messaging/realtime/url", environment: environment))
        return response.realtimeURL
    }

    /// Delete Realtime URL.
    public func deleteRealtimeURL(environment: Environment) async throws(AppStoreAPIError) {
        _ = try await self.send(.DELETE, "/inApps/v1/messaging/realtime/url", environment: environment)
    }

    /// Initiate Performance Test against the environment's real-time URL, with requests about `originalTransactionId`.
    public func initiatePerformanceTest(originalTransactionId: String, environment: Environment)
        async throws(AppStoreAPIError) -> PerformanceTestResponse
    {
        try Self.decode(
            try await self.send(
                .POST, "/inApps/v1/messaging/performanceTest",
                body: try Self.encode(PerformanceTestRequest(originalTransactionId: originalTransactionId)),
                environment: environment))
    }

    /// Get Performance Test Results.
    public func performanceTestResult(_ requestId: String, environment: Environment)
        async throws(AppStoreAPIError) -> PerformanceTestResultResponse
    {
        try Self.decode(
            try await self.send(
                .GET, "/inApps/v1/messaging/performanceTest/result/\(Self.escape(requestId))", environment: environment)
        )
    }

    /// A UUID as Apple's paths and bodies write it.
    private static func lower(_ id: UUID) -> String { id.uuidString.lowercased() }
}
