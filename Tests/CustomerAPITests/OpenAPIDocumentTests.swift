import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NotificationPipeline
import Prometheus
import ServiceRuntime
import TestSupport
import Testing

@testable import CustomerAPI

/// customer-api's OpenAPI document (docs/openapi.json) is what it serves at `/openapi.json`, and it describes
/// exactly the routes the router has: a route added without its description, or a description left behind by a
/// removed route, fails here. What each answer looks like is checked against a live customer-api by schemathesis
/// (`SchemathesisTests` in SystemTests).
@Suite struct OpenAPIDocumentTests {
    static let documentURL = LocalComponents.repositoryRoot.appending(path: "docs/openapi.json")

    /// The settings of a customer-api that takes purchases and serves the support routes on its admin listener
    /// (nothing connects).
    static func fullSettings() throws -> CustomerAPISettings {
        try CustomerAPISettings(
            EnvironmentSettings(
                [
                    "DATABASE_URL": "postgres://postgres@127.0.0.1:1/postgres", "APPSTORE_APPS": "com.example.app:1",
                    "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1", "OPERATIONS_PORT": "9085",
                    "CUSTOMER_API_ADMIN_PORT": "8088",
                ].merging(TestRecordSigning.environment(.customerAPI)) { a, _ in a }))
    }

    /// Every operation of the document as `METHOD /path` (Hummingbird describes a capture as `{name}` too).
    static func documentedOperations() throws -> Set<String> {
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.documentURL)) as? [String: Any]
        let paths = try #require(document?["paths"] as? [String: [String: Any]])
        var operations = Set<String>()
        for (path, item) in paths {
            for method in item.keys where ["get", "put", "post", "delete", "patch"].contains(method) {
                operations.insert(method.uppercased() + " " + path)
            }
        }
        return operations
    }

    @Test func theServedDocumentIsDocsOpenAPIJSON() async throws {
        let app = try buildApplication(
            settings: CustomerAPISettings(database: try .init(url: "postgres://postgres@127.0.0.1:1/postgres")),
            registry: PrometheusCollectorRegistry(), logger: Logger(label: "openapi"))
        try await app.test(.router) { client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(response.status == .ok && response.headers[.contentType] == "application/json")
            let file = try Data(contentsOf: Self.documentURL)
            #expect(Data(buffer: response.body) == file, "the build embeds docs/openapi.json as it is")
        }
    }

    @Test func theDocumentDescribesExactlyTheRoutes() async throws {
        let (router, admin, services) = try buildRouter(
            settings: Self.fullSettings(), registry: PrometheusCollectorRegistry(), logger: Logger(label: "openapi"))
        // The services never run here; the HTTP client must still be shut down before it goes.
        for case let http as HTTPClientService in services { try await http.client.shutdown() }
        func described(_ router: Router<CustomerAPIContext>) -> Set<String> {
            Set(
                router.routes.map { route in
                    let path = route.path.description
                    return route.method.rawValue + " " + (path.hasPrefix("/") ? path : "/" + path)
                })
        }
        let publicRoutes = described(router)
        let adminRoutes = described(try #require(admin, "an admin port gives the support routes a router of their own"))
        let isAdmin = { (route: String) in route.contains(" /v1/admin/") || route.contains(" /console") }
        #expect(!publicRoutes.contains(where: isAdmin), "the public listener serves no support route or console")
        #expect(adminRoutes.allSatisfy(isAdmin), "the admin listener serves only those: \(adminRoutes.sorted())")
        let routes = publicRoutes.union(adminRoutes)
        let documented = try Self.documentedOperations()
        #expect(routes.count > 15, "the router lists its routes: \(routes.sorted())")
        #expect(
            routes.subtracting(documented).isEmpty,
            "routes without a description: \(routes.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(routes).isEmpty,
            "described operations without a route: \(documented.subtracting(routes).sorted())")
    }
}
