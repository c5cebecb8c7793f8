import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import JWSVerification
import Logging
import ServiceRuntime
import Storage

/// The read routes: `GET /v1/apps/{bundleId}/customers/{customer}` answers the customer's entitlements as
/// of the request time, with an ETag, in one environment: `?environment=Production|Sandbox|…`, by default Production when
/// it is configured, `all` for every one. The id is an app user id
/// unless `?idType=appAccountToken` or `?idType=originalTransactionId` says otherwise; one kind never matches
/// another.
struct CustomerRoutes {
    let lookup: CustomerLookup
    let outcomes: LabelledCounter
    /// The environment a look-up without `environment` reads (nil: all), ``CustomerAPISettings/defaultLookupEnvironment``.
    var defaultEnvironment: String? = "Production"

    /// Adds the routes to a router group that already authenticates.
    func add(to group: RouterGroup<CustomerAPIContext>) {
        group.get("apps/:bundleId/customers/:customer") { request, context in
            try await self.customer(request, context: context)
        }
    }

    /// The customer's view, 304 when the client's ETag still matches, 404 when nothing is known.
    func customer(_ request: Request, context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let customer = try context.parameters.require("customer")
        // Without `environment`, Production when it is configured: Sandbox rows are never `active` beside Production
        // ones by accident (a tester's sandbox purchase is no paying customer's access); `all` reads every one.
        var environment: String? =
            request.uri.queryParameters.get("environment").map { String($0) } ?? self.defaultEnvironment
        if environment == "all" { environment = nil }
        if let environment, !["Production", "Sandbox", "Xcode", "LocalTesting"].contains(environment) {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(
                .badRequest, "bad-environment", "environment must be Production, Sandbox, Xcode, LocalTesting or all")
        }
        guard customer.count <= 128 else {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(.badRequest, "bad-customer", "a customer id is at most 128 characters")
        }
        let kindName = request.uri.queryParameters.get("idType") ?? CustomerIDKind.appUserId.rawValue
        guard let kind = CustomerIDKind(rawValue: kindName) else {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(
                .badRequest, "bad-id-type", "idType must be appUserId, appAccountToken or originalTransactionId")
        }
        return try await self.viewResponse(
            bundleId: bundleId, customer: customer, kind: kind, environment: environment,
            ifNoneMatch: request.headers[.ifNoneMatch])
    }

    /// The customer's view as of now with its ETag (304 when `ifNoneMatch` still matches, 404 when nothing is
    /// known); `extra` is more JSON members for the object (the POST adds its request id).
    func viewResponse(
        bundleId: String, customer: String, kind: CustomerIDKind, environment: String?, ifNoneMatch: String?,
        extra: String? = nil
    ) async throws -> Response {
        let asOf = Int64(Date().timeIntervalSince1970 * 1000)
        let view = try await self.lookup.view(
            bundleId: bundleId, customer: customer, kind: kind, environment: environment, asOf: asOf)
        guard !view.isEmpty else {
            self.outcomes.increment("not-found")
            return APIErrorResponse.response(
                .notFound, "unknown-customer", "nothing is stored for \(customer) in \(bundleId)")
        }
        // The ETag covers the state, not the evaluation instant: the same entitlements give the same tag.
        let state = view.entitlements + "\u{1F}" + view.subscriptions + "\u{1F}" + view.purchases
        let tag = "\"" + Hex.encode(SHA256.hash(data: Data(state.utf8)).prefix(16)) + "\""
        var headers = HTTPFields()
        headers[.eTag] = tag
        headers[.cacheControl] = "private, no-cache"
        if ifNoneMatch == tag {
            self.outcomes.increment("not-modified")
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json"
        self.outcomes.increment("ok")
        // The body is CustomerView's JSON; PostgreSQL built the arrays, so nothing is decoded and encoded again.
        let body =
            #"{"bundleId":"# + JSONText.quoted(bundleId) + #","customer":"# + JSONText.quoted(customer) + #","asOf":"#
            + String(asOf)
            + #","entitlements":"# + view.entitlements + #","subscriptions":"# + view.subscriptions + #","purchases":"#
            + view.purchases
            + (extra.map { "," + $0 } ?? "") + "}"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
