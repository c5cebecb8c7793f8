import Foundation
import Storage
import Testing

@testable import CustomerAPI

/// The console's customer fragment comes from a Mustache template that escapes every value: hostile text in
/// any field (a notification's detail, an app user id, a DLQ reason) stays text.
@Suite struct SupportFragmentTests {
    static let hostile = #"<script>alert("x")</script>&'"#

    /// A value of a Codable type read from JSON (the look-ups' types have no public memberwise initialisers).
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    static func view() throws -> SupportView {
        // the hostile text as a JSON string
        let h = try String(decoding: JSONEncoder().encode(Self.hostile), as: UTF8.self)
        return SupportView(
            query: Self.hostile, customer: Self.hostile, asOf: 1_700_000_000_000, notes: [Self.hostile],
            entitlements: [
                try Self.decode(
                    CustomerView.Entitlement.self,
                    #"{"environment":"Sandbox","entitlementId":\#(h),"productId":"p","active":true,"originalTransactionId":\#(h),"ownershipType":"PURCHASED"}"#
                )
            ],
            subscriptions: [
                try Self.decode(
                    CustomerView.Subscription.self,
                    #"{"environment":"Sandbox","originalTransactionId":\#(h),"productId":"p","status":1}"#)
            ],
            purchases: [],
            timeline: [
                try Self.decode(
                    SupportLookup.TimelineEntry.self,
                    #"{"notificationUUID":"u","type":"DID_RENEW","environment":"Sandbox","subject":"s","signedDate":1,"appliedAt":0,"outcome":\#(h),"detail":\#(h),"duplicates":2}"#
                )
            ],
            deadLetters: [try Self.decode(DeadLetters.Row.self, #"{"position":\#(h),"reason":\#(h),"recordedAt":0}"#)],
            consumptionRequests: [], refunds: nil)
    }

    @Test func everyValueIsEscapedAndTheMarkupIsTheTemplates() throws {
        let html = SupportPage.fragment(try Self.view(), bundleId: "com.example.app")
        #expect(!html.contains("<script"), "a value became markup")
        #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"))
        for id in ["entitlements", "subscriptions", "timeline", "dead-letters"] {
            #expect(html.contains("<table id=\"\(id)\">"))
        }
        for id in ["purchases", "consumption"] { #expect(html.contains("<p class=\"empty\" id=\"\(id)\">none</p>")) }
        #expect(!html.contains("id=\"refunds\""), "no refund section unless Apple's history was asked for")
        #expect(html.contains(#"<b class="yes">active</b>"#) && html.contains("2 duplicates"))
        #expect(html.contains(#"<button data-action="replay" data-position="&lt;script&gt;"#))
        #expect(html.contains(#"<button data-action="extend" data-original="&lt;script&gt;"#))
    }
}
