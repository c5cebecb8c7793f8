import Foundation
import Hummingbird
import HummingbirdTesting
import ServiceRuntime
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The shared overload bound of ingest and customer-api, on a real HTTP server: beyond the limit of requests in
/// flight the answer is 503 with `Retry-After` at once (never a wait in a queue), the operations routes are
/// always answered, and the places come back when requests finish.
@Suite struct LoadSheddingTests {
    @Test func requestsBeyondTheLimitGet503AtOnceAndOperationsRoutesStillAnswer() async throws {
        let router = Router()
        let shed = InFlightCounter()
        router.add(middleware: LoadSheddingMiddleware(limit: 2, inFlight: shed))
        router.get("/health") { _, _ in "ok" }
        // The served requests hold their places until the test opens the gate: no timing involved.
        let gate = Gate()
        router.get("/slow") { _, _ -> String in
            while !gate.isOpen { try await Task.sleep(for: .milliseconds(10)) }
            return "done"
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // Separate connections (URLSession), so the six requests really are in flight together.
            let statuses = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let (_, response) = try await URLSession.shared.data(
                            from: URL(string: "http://127.0.0.1:\(port)/slow")!)
                        let http = response as! HTTPURLResponse
                        return (http.statusCode, http.value(forHTTPHeaderField: "Retry-After") ?? "")
                    }
                }
                var all: [(Int, String)] = []
                // Four answers come while two requests hold the places; then the gate opens for those two.
                for _ in 0..<4 { if let status = try await group.next() { all.append(status) } }
                gate.open()
                for try await status in group { all.append(status) }
                return all
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 2, "exactly the limit is served: \(statuses)")
            #expect(statuses.filter { $0.0 == 503 }.allSatisfy { $0.1 == "1" })
            #expect(statuses.filter { $0.0 == 503 }.count == 4)
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            #expect(shed.current == 0, "every place was given back")
            try await client.execute(uri: "/slow", method: .get) {
                #expect($0.status == .ok, "served again once the others finished")
            }
        }
    }
}

/// A flag the test sets once to let held requests finish.
final class Gate: Sendable {
    private let flag = Atomic<Bool>(false)
    var isOpen: Bool { self.flag.load(ordering: .acquiring) }
    func open() { self.flag.store(true, ordering: .releasing) }
}
