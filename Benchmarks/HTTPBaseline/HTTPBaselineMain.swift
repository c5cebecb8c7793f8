import Foundation
import Hummingbird

/// A bare Hummingbird server: 200 OK to `POST /notifications` after reading the body (the baseline ingest is
/// compared with, `Benchmarks/run-pipeline.sh`) and a small fixed JSON to `GET /v1/apps/…/customers/…` (the
/// baseline customer-api's look-ups are compared with, `Benchmarks/run-lookup.sh`) and to `POST /retention-message`
/// (retention-messaging's baseline, `Benchmarks/run-retention.sh`), measured in the same run.
@main
enum HTTPBaselineMain {
    static func main() async throws {
        // No argument: 8090; anything that is not a port number (0 stands for it): the usage.
        let port = CommandLine.arguments.dropFirst().first.map { Int($0) ?? 0 } ?? 8090
        guard (1...65535).contains(port) else {
            FileHandle.standardError.write(Data("usage: http-baseline [PORT]   (1-65535, default 8090)\n".utf8))
            exit(2)
        }
        let router = Router()
        router.post("/notifications") { request, _ -> HTTPResponse.Status in
            var request = request
            _ = try await request.collectBody(upTo: 256 * 1024)
            return .ok
        }
        router.get("/v1/apps/:bundleId/customers/:customer") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"entitlements":[],"subscriptions":[],"purchases":[]}"#)))
        }
        router.post("/retention-message") { request, _ -> Response in
            var request = request
            _ = try await request.collectBody(upTo: 64 * 1024)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: #"{"message":{"messageIdentifier":"6f1d9c1e-0d0e-4e55-8a55-0b6a1c2d3e01"}}"#)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        try await app.runService()
    }
}
