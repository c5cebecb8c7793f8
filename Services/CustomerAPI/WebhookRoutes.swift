import Foundation
import HTTPTypes
import Hummingbird
import ServiceRuntime
import Storage
import Webhooks

/// The webhook administration routes (`/v1/admin/apps/{bundleId}/webhooks…`, admin keys only): register an endpoint
/// (its first secret is shown once), list them, add a secret (the older ones keep signing for an overlap), enable one
/// the dispatcher disabled, read its delivery log, and replay one delivery or a time range. The URL must be https and
/// public unless the operator allows otherwise (`WEBHOOK_ALLOW_PRIVATE_ADDRESSES`).
struct WebhookRoutes: Sendable {
    let administration: WebhookAdministration
    let addresses: EndpointAddressPolicy
    let outcomes: LabelledCounter

    static let environments = ["Production", "Sandbox", "Xcode", "LocalTesting"]
    static let maximumBody = 16 * 1024

    func add(to group: RouterGroup<CustomerAPIContext>) {
        let webhooks = group.group("admin/apps/:bundleId/webhooks")
        webhooks.post { request, context in try await self.register(request, context) }
        webhooks.get { request, context in
            let environment = request.uri.queryParameters.get("environment")
            if let environment, !Self.environments.contains(environment) {
                return self.refuse("bad-environment", "environment must be one of \(Self.environments)")
            }
            let endpoints = try await self.administration.endpoints(
                bundleId: try context.parameters.require("bundleId"), environment: environment)
            return Self.json(EndpointList(endpoints: endpoints))
        }
        webhooks.get(":endpointId") { _, context in
            guard
                let endpoint = try await self.administration.endpoint(
                    id: try context.parameters.require("endpointId"),
                    bundleId: try context.parameters.require("bundleId"))
            else { return self.unknown() }
            return Self.json(endpoint)
        }
        webhooks.post(":endpointId/secrets") { request, context in try await self.rotate(request, context) }
        webhooks.post(":endpointId/enable") { _, context in
            let id = try context.parameters.require("endpointId"), app = try context.parameters.require("bundleId")
            guard try await self.administration.enable(endpointId: id, bundleId: app),
                let endpoint = try await self.administration.endpoint(id: id, bundleId: app)
            else { return self.unknown() }
            self.outcomes.increment("webhook-enabled")
            return Self.json(endpoint)
        }
        webhooks.get(":endpointId/deliveries") { request, context in try await self.deliveries(request, context) }
        webhooks.post(":endpointId/replay") { request, context in try await self.replay(request, context) }
    }

    // MARK: - Bodies and answers

    /// What registering takes.
    struct Registration: Decodable {
        var url: String
        var environment: String?
        var eventTypes: [String]?
        var ratePerSecond: Int?
        var concurrency: Int?
    }

    /// An endpoint with a secret shown once (registration, rotation).
    struct WithSecret: Encodable {
        var endpoint: WebhookEndpointRow
        var secret: String
    }

    struct EndpointList: Encodable {
        var endpoints: [WebhookEndpointRow]
    }

    struct DeliveryList: Encodable {
        var deliveries: [WebhookDeliveryLogEntry]
    }

    /// What a replay takes: one delivery, or a range of creation times.
    struct ReplayRequest: Decodable {
        var deliveryId: Int64?
        var from: Date?
        var to: Date?
    }

    struct Rotation: Decodable {
        var overlapSeconds: Int?
    }

    // MARK: - Handlers

    /// `POST …/webhooks`: registers an endpoint; 201 with its first secret.
    func register(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        guard let body: Registration = try await self.body(request).value else {
            return self.refuse("bad-body", "the body must be JSON with at least a url")
        }
        if let refusal = self.addresses.refusal(of: body.url) { return self.refuse("bad-url", refusal) }
        guard body.url.utf8.count <= 2048 else { return self.refuse("bad-url", "the URL is longer than 2048 bytes") }
        let environment = body.environment ?? "Production"
        guard Self.environments.contains(environment) else {
            return self.refuse("bad-environment", "environment must be one of \(Self.environments)")
        }
        let types = body.eventTypes ?? []
        guard types.count <= 64, types.allSatisfy(Self.isEventType) else {
            return self.refuse("bad-event-types", "eventTypes are event types such as entitlement.granted (64 at most)")
        }
        let rate = body.ratePerSecond ?? 50, concurrency = body.concurrency ?? 4
        guard (1...1000).contains(rate), (1...64).contains(concurrency) else {
            return self.refuse("bad-limits", "ratePerSecond must be 1 to 1000 and concurrency 1 to 64")
        }
        let secret = WebhookSecret.generate()
        let endpoint = try await self.administration.register(
            NewWebhookEndpoint(
                environment: environment, bundleId: bundleId, url: body.url, eventTypes: types, ratePerSecond: rate,
                concurrency: concurrency),
            secret: secret.description)
        self.outcomes.increment("webhook-registered")
        return Self.json(WithSecret(endpoint: endpoint, secret: secret.description), status: .created)
    }

    /// `POST …/webhooks/{id}/secrets`: a new secret; the older ones sign for `overlapSeconds` more (default a day).
    func rotate(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let parsed: Body<Rotation> = try await self.body(request)
        if case .invalid = parsed {
            return self.refuse("bad-body", #"the body must be {"overlapSeconds": N} or empty"#)
        }
        let body = parsed.value ?? Rotation()
        let overlap = body.overlapSeconds ?? 86_400
        guard (0...(7 * 86_400)).contains(overlap) else {
            return self.refuse("bad-overlap", "overlapSeconds must be 0 to 604800")
        }
        let secret = WebhookSecret.generate()
        guard
            let endpoint = try await self.administration.rotateSecret(
                endpointId: try context.parameters.require("endpointId"),
                bundleId: try context.parameters.require("bundleId"), secret: secret.description,
                overlap: TimeInterval(overlap))
        else { return self.unknown() }
        self.outcomes.increment("webhook-secret-added")
        return Self.json(WithSecret(endpoint: endpoint, secret: secret.description))
    }

    /// `GET …/webhooks/{id}/deliveries[?from=&to=&state=&limit=]`: the delivery log, newest first.
    func deliveries(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let query = request.uri.queryParameters
        let from = query.get("from").flatMap(Self.date), to = query.get("to").flatMap(Self.date)
        if (query.get("from") != nil && from == nil) || (query.get("to") != nil && to == nil) {
            return self.refuse("bad-time", "from and to are ISO 8601 times such as 2026-11-27T10:00:00Z")
        }
        let state = query.get("state")
        if let state, !["pending", "delivered"].contains(state) {
            return self.refuse("bad-state", "state must be pending or delivered")
        }
        guard let limit = EventFeedRoute.integer(query.get("limit"), default: 100, in: 1...500) else {
            return self.refuse("bad-limit", "limit must be 1 to 500")
        }
        let id = try context.parameters.require("endpointId"), app = try context.parameters.require("bundleId")
        guard try await self.administration.endpoint(id: id, bundleId: app) != nil else { return self.unknown() }
        let deliveries = try await self.administration.deliveries(
            endpointId: id, bundleId: app, from: from, to: to, state: state, limit: limit)
        return Self.json(DeliveryList(deliveries: deliveries))
    }

    /// `POST …/webhooks/{id}/replay`: `{"deliveryId": N}` or `{"from": …, "to": …}`; answers how many were queued.
    func replay(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        guard let body: ReplayRequest = try await self.body(request).value,
            body.deliveryId != nil || (body.from != nil && body.to != nil)
        else {
            return self.refuse("bad-body", #"the body must be {"deliveryId": N} or {"from": TIME, "to": TIME}"#)
        }
        let id = try context.parameters.require("endpointId"), app = try context.parameters.require("bundleId")
        guard try await self.administration.endpoint(id: id, bundleId: app) != nil else { return self.unknown() }
        let count: Int
        if let deliveryId = body.deliveryId {
            guard try await self.administration.replay(endpointId: id, bundleId: app, deliveryId: deliveryId) else {
                return APIErrorResponse.response(.notFound, "unknown-delivery", "the endpoint has no such delivery")
            }
            count = 1
        } else if let from = body.from, let to = body.to {
            count = try await self.administration.replay(endpointId: id, bundleId: app, from: from, to: to)
        } else {
            count = 0
        }
        self.outcomes.increment("webhook-replayed")
        return Self.json(["replayed": count])
    }

    // MARK: - Helpers

    /// What a request's body came to.
    enum Body<T> {
        case empty
        case invalid
        case value(T)

        /// The value; nil when empty or invalid.
        var value: T? {
            if case .value(let value) = self { return value }
            return nil
        }
    }

    /// The JSON body decoded (ISO 8601 times), or whether it was empty or not that JSON; a body too large or too slow
    /// is refused with 413 or 408.
    private func body<T: Decodable>(_ request: Request) async throws -> Body<T> {
        let buffer = try await BoundedBody.read(request, limit: Self.maximumBody)
        guard buffer.readableBytes > 0 else { return .empty }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let value = try? decoder.decode(T.self, from: Data(buffer.readableBytesView)) else { return .invalid }
        return .value(value)
    }

    /// Whether a text is an event type (`family.access-gained`, `webhook.endpoint-disabled`).
    static func isEventType(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && text.count <= 64
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isLowercase || $0 == "-" } }
    }

    /// An ISO 8601 time.
    static func date(_ text: String) -> Date? {
        try? Date(text, strategy: .iso8601)
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        SupportRoutes.json(value, status: status)
    }

    private func refuse(_ code: String, _ message: String) -> Response {
        self.outcomes.increment("bad-request")
        return APIErrorResponse.response(.badRequest, code, message)
    }

    private func unknown() -> Response {
        APIErrorResponse.response(.notFound, "unknown-endpoint", "the app has no webhook endpoint with this id")
    }
}
