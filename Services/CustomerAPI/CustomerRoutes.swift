import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServiceRuntime
import Storage

/// The read routes: `GET /v1/apps/{bundleId}/customers/{customer}` answers the customer's entitlements as
/// of the request time (the customer is an appAccountToken or an originalTransactionId of one of its
/// purchases), with an ETag; `?environment=Production|Sandbox` narrows it.
struct CustomerRoutes {
    let lookup: CustomerLookup
    let outcomes: LabelledCounter

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
        let environment = request.uri.queryParameters.get("environment")
        if let environment, !["Production", "Sandbox", "Xcode", "LocalTesting"].contains(environment) {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(.badRequest, "bad-environment", "environment must be Production, Sandbox, Xcode or LocalTesting")
        }
        guard customer.count <= 128 else {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(.badRequest, "bad-customer", "a customer id is at most 128 characters")
        }
        let view = try await self.lookup.view(bundleId: bundleId, customer: customer, environment: environment)
        guard !view.isEmpty else {
            self.outcomes.increment("not-found")
            return APIErrorResponse.response(.notFound, "unknown-customer", "nothing is stored for \(customer) in \(bundleId)")
        }
        // The ETag covers the state, not the evaluation instant: the same entitlements give the same tag.
        var state = view
        state.asOf = 0
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let tag = "\"" + SHA256.hash(data: try encoder.encode(state)).prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
        var headers = HTTPFields()
        headers[.eTag] = tag
        headers[.cacheControl] = "private, no-cache"
        if request.headers[.ifNoneMatch] == tag {
            self.outcomes.increment("not-modified")
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json"
        self.outcomes.increment("ok")
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(view))))
    }
}
