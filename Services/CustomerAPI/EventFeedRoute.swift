import Foundation
import HTTPTypes
import Hummingbird
import ServiceRuntime
import Storage

/// `GET /v1/apps/{bundleId}/events?after=CURSOR[&environment=…][&limit=N][&wait=S]`: the app's events for a team
/// without Kafka, read from a cursor (``EventFeed``). The answer is `{"events": [...], "next": "CURSOR"}`: the events'
/// JSON as the topics carry them (`sequence` included), in the order they were published, and the cursor to send as
/// `after` next time (it moves on even when nothing of this app was published, so a quiet app never rereads). With
/// `wait`, a read that finds nothing waits up to that many seconds (30 at most) for an event before answering: long
/// polling. Without `after`, the feed starts at the oldest event kept.
struct EventFeedRoute: Sendable {
    let feed: EventFeed
    /// The environment a read without `environment` names (as look-ups: Production when it is configured).
    let defaultEnvironment: String?
    let outcomes: LabelledCounter
    /// How often a long poll looks again.
    var pollInterval: Duration = .milliseconds(250)

    static let maximumLimit = 500
    static let maximumWait = 30

    func add(to group: RouterGroup<CustomerAPIContext>) {
        group.get("apps/:bundleId/events") { request, context in
            try await self.events(request, context: context)
        }
    }

    /// One page of the feed, after waiting for one when asked to.
    func events(_ request: Request, context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let query = request.uri.queryParameters
        let environment = query.get("environment") ?? self.defaultEnvironment ?? "Production"
        guard ["Production", "Sandbox", "Xcode", "LocalTesting"].contains(environment) else {
            return self.refuse("bad-environment", "environment must be Production, Sandbox, Xcode or LocalTesting")
        }
        var after = EventFeed.Cursor.start
        if let text = query.get("after") {
            guard let cursor = EventFeed.Cursor(text) else {
                return self.refuse("bad-cursor", "after must be a cursor this feed gave (`next`)")
            }
            after = cursor
        }
        guard let limit = Self.integer(query.get("limit"), default: 100, in: 1...Self.maximumLimit) else {
            return self.refuse("bad-limit", "limit must be 1 to \(Self.maximumLimit)")
        }
        guard let wait = Self.integer(query.get("wait"), default: 0, in: 0...Self.maximumWait) else {
            return self.refuse("bad-wait", "wait must be 0 to \(Self.maximumWait) seconds")
        }
        let deadline = ContinuousClock.now + .seconds(wait)
        var page = try await self.feed.read(environment: environment, bundleId: bundleId, after: after, limit: limit)
        while page.events.isEmpty && ContinuousClock.now + self.pollInterval <= deadline && !Task.isCancelled {
            try await Task.sleep(for: self.pollInterval)
            page = try await self.feed.read(
                environment: environment, bundleId: bundleId, after: page.next, limit: limit)
        }
        self.outcomes.increment("events")
        // The events go out as stored: their JSON is joined, not decoded and encoded again.
        let body =
            #"{"events":["# + page.events.joined(separator: ",") + #"],"next":""# + page.next.description
            + #""}"#
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// A query integer within `range` (absent: `default`); nil when malformed or outside.
    static func integer(_ text: String?, default value: Int, in range: ClosedRange<Int>) -> Int? {
        guard let text else { return value }
        guard let number = Int(text), range.contains(number) else { return nil }
        return number
    }

    /// 400 with a code and a message.
    private func refuse(_ code: String, _ message: String) -> Response {
        self.outcomes.increment("bad-request")
        return APIErrorResponse.response(.badRequest, code, message)
    }
}
