import Hummingbird

/// A bare Hummingbird server answering 200 OK to `POST /notifications` after reading the body: the baseline
/// ingest's throughput is compared with, measured in the same run (`Benchmarks/run-pipeline.sh`).
@main
enum HTTPBaselineMain {
    static func main() async throws {
        let port = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 8090
        let router = Router()
        router.post("/notifications") { request, _ -> HTTPResponse.Status in
            var request = request
            _ = try await request.collectBody(upTo: 256 * 1024)
            return .ok
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        try await app.runService()
    }
}
