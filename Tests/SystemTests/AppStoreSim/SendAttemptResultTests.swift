@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import NIOCore
import TestSupport
import Testing

/// The sim names a post without an answer as Apple's sender does, from the error a real client saw against a real
/// server on loopback: a hang-up is PREMATURE_CLOSE, an answer that never comes TIMED_OUT, a port nobody listens
/// on NO_RESPONSE (so a failed performance test says what happened on the wire).
@Suite(.tags(.integration), .notInUnitRuns) struct SendAttemptResultTests {
    @Test func eachFailureIsNamedAsAppleNamesIt() async throws {
        let server = try await MisbehavingServer.start()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        /// What a POST to `path` on `port` ended in: Apple's name for its error, or nil when it was answered.
        func result(_ path: String, port: Int, timeout: TimeAmount) async -> String? {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: #"{"signedPayload":"x.y.z"}"#))
            do {
                _ = try await http.execute(request, timeout: timeout).body.collect(upTo: 1 << 16)
                return nil
            } catch {
                return SendAttemptResult.of(error)
            }
        }
        // Time-outs far beyond what a loaded machine takes, except where the time-out is what is tested.
        #expect(await result("/ok", port: server.port, timeout: .seconds(60)) == nil)
        #expect(await result("/hang-up", port: server.port, timeout: .seconds(60)) == "PREMATURE_CLOSE")
        #expect(await result("/silent", port: server.port, timeout: .milliseconds(300)) == "TIMED_OUT")
        try await server.close()
        let nobody = try LocalComponents.freePortBelowEphemeralRange()
        // Refused connections are tried again until the deadline, then the last refusal is the error.
        #expect(await result("/ok", port: nobody, timeout: .seconds(5)) == "NO_RESPONSE")
        #expect(SendAttemptResult.of(HTTPClientError.redirectCycleDetected) == "CIRCULAR_REDIRECT")
        #expect(SendAttemptResult.of(CancellationError()) == "OTHER")
        try await http.shutdown()
    }
}
