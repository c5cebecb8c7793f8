import AppStoreModels
import Entitlements
import Foundation
import Hummingbird
import ServiceRuntime
import Storage

/// `POST /v1/apps/{bundleId}/customers/{appUserId}/account-tokens`: the app team declares that an appAccountToken
/// (the UUID its app passes to StoreKit at purchase) belongs to this app user. Only then can the user claim the
/// purchases Apple signed with that token (``PurchaseOwnership``). 201 when recorded, 200 when it was already
/// this user's, 409 `token-owned-by-another-user` when it was declared for someone else (nothing changes).
///
/// Decision: customer-api writes the declaration itself (like its keys), not through Kafka: it moves no
/// entitlement; the entitlement-updater reads it when a claim arrives, under the purchase's lock.
struct AccountTokenRoute: Sendable {
    let owners: AccountTokenOwners
    let outcomes: LabelledCounter

    /// The JSON body.
    struct Body: Decodable {
        var appAccountToken: String
        /// Production (default), Sandbox, Xcode or LocalTesting: a token is declared per environment.
        var environment: String?
    }

    func add(to group: RouterGroup<CustomerAPIContext>) {
        group.post("apps/:bundleId/customers/:customer/account-tokens") { request, context in
            do {
                return try await self.declare(request, context)
            } catch let refusal as PurchaseRefusal {
                self.outcomes.increment("bad-request")
                return refusal.response
            }
        }
    }

    /// Validates, records, answers.
    func declare(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let appUserId = try context.parameters.require("customer")
        guard !appUserId.isEmpty, appUserId.count <= 128 else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-app-user-id", message: "an app user id is 1 to 128 characters")
        }
        let bytes = try await BoundedBody.read(request, limit: 4096)
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView)) else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-body",
                message: #"expected {"appAccountToken": "<uuid>", "environment": "Production"}"#)
        }
        guard let token = CustomerKey.validToken(body.appAccountToken) else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-account-token",
                message: "appAccountToken is a UUID other than all zeros")
        }
        let environment = body.environment ?? "Production"
        guard ["Production", "Sandbox", "Xcode", "LocalTesting"].contains(environment) else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-environment",
                message: "environment must be Production, Sandbox, Xcode or LocalTesting")
        }
        let declared = try await self.owners.declare(
            token: token, appUserId: appUserId, environment: environment, bundleId: bundleId,
            keyId: context.key?.keyId ?? "unknown")
        let answer =
            #"{"appAccountToken":"# + JSONText.quoted(token) + #","appUserId":"# + JSONText.quoted(appUserId)
            + #","environment":"# + JSONText.quoted(environment) + "}"
        switch declared {
        case .created:
            self.outcomes.increment("token-declared")
            return Response(
                status: .created, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: answer)))
        case .unchanged:
            self.outcomes.increment("token-declared")
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: answer)))
        case .conflict:
            self.outcomes.increment("conflict")
            return APIErrorResponse.response(
                .conflict, "token-owned-by-another-user", "this appAccountToken was declared for another app user")
        }
    }
}
