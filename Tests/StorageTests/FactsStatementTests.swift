import AppStoreModels
import EntitlementDecisions
import Foundation
import TestSupport
import Testing

@testable import Entitlements
@testable import Storage

/// The wave's facts statement reads its facts with `json_to_recordset`, which silently drops a JSON key that has
/// no column and reads NULL for a column that has no key, its events from arrays bound by position; and its INSERTs
/// pair columns with values by position. These tests tie the statement's column lists to the members its writers
/// write (every one, nil ones as `null`) and to the arrays it binds, so adding a column takes edits that a test
/// checks together.
@Suite struct FactsStatementTests {
    /// The column names of `… AS alias(name [type], …)` in `sql`: a `json_to_recordset`'s, or an `unnest`'s.
    static func recordsetColumns(_ sql: String, alias: String) throws -> [String] {
        let start = try #require(sql.range(of: "AS \(alias)("), "no recordset \(alias)")
        var depth = 1
        var index = start.upperBound
        while depth > 0 {
            if sql[index] == "(" { depth += 1 } else if sql[index] == ")" { depth -= 1 }
            index = sql.index(after: index)
        }
        return sql[start.upperBound..<sql.index(before: index)].split(separator: ",").map {
            String($0.split(whereSeparator: \.isWhitespace)[0])
        }
    }

    /// Each `INSERT INTO table (columns) SELECT values FROM input` of `sql`: the table, its columns and the values.
    static func inserts(_ sql: String) -> [(table: String, columns: [String], values: [String])] {
        let flat = sql.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(
            separator: " ")
        return flat.matches(of: #/INSERT INTO (\w+) \(([^)]*)\)\s*SELECT (.+?) FROM /#).map { match in
            let split = { (text: Substring) in
                text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            return (String(match.output.1), split(match.output.2), split(match.output.3))
        }
    }

    /// The keys a writer wrote at its top level (nil members written as `null`, so every member is listed), in order.
    static func keys(_ write: (inout JSONMemberWriter) throws -> Void) throws -> [String] {
        var writer = JSONMemberWriter(capacity: 4_096, writesNil: true)
        try writer.object(write)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(writer.bytes), options: .fragmentsAllowed) as? [String: Any])
        let keys = String(decoding: writer.bytes, as: UTF8.self).matches(of: #/[{,]"(\w+)":/#).map {
            String($0.output.1)
        }
        // Every key the pattern found is one of the object's, and none is missing (no value held such a pattern).
        #expect(Set(keys) == Set(object.keys) && keys.count == object.count, "\(keys) against \(object.keys.sorted())")
        return keys
    }

    /// The facts row of a real notification, as the repository builds it.
    static func factsRow() -> WavePlan.FactsRow {
        let record = VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "1000", day: 0)
        let entry = NotificationLogEntry(
            id: "id", type: "SUBSCRIBED", subtype: "INITIAL_BUY", subject: "1000", environment: "Sandbox",
            bundleId: "com.example.app",
            signedDate: 1, receivedAt: nil)
        let update = EntitlementUpdate(outcome: .applied, detail: "", advancesSubject: true)
        return WavePlan.FactsRow(
            entry: entry, update: update, notification: record.notification, customer: "1000", entitlement: nil,
            events: [])
    }

    @Test func theFactsRecordsetHasExactlyTheWrittenMembers() throws {
        let fields = try Self.keys { try NotificationFacts.write(Self.factsRow(), to: &$0) }
        let columns = try Self.recordsetColumns(NotificationFacts.WriteStatement.sql, alias: "i")
        #expect(fields.count > 60)
        #expect(
            columns == fields,
            "columns without a member: \(Set(columns).subtracting(fields).sorted()), members without a column: \(Set(fields).subtracting(columns).sorted())"
        )
    }

    @Test func theOutboxColumnsAreTheStatementsInTheirOrder() throws {
        let event = OutboxEvent(
            id: "e", topic: "t", key: "k", payload: "{}", environment: "Sandbox", bundleId: "b", traceParent: nil)
        var columns = try NotificationFacts.OutboxColumns([])
        try columns.append(event)
        #expect(columns.columns.count == NotificationFacts.OutboxColumns.names.count)
        #expect(
            try Self.recordsetColumns(NotificationFacts.WriteStatement.sql, alias: "e")
                == NotificationFacts.OutboxColumns.names + ["position"])
        // `$1` is the facts, the columns follow it in order.
        let parameters = NotificationFacts.WriteStatement.sql.matches(of: #/\$(\d+)::text\[\]/#).map {
            Int($0.output.1)!
        }
        #expect(parameters == Array(2...(1 + NotificationFacts.OutboxColumns.names.count)))
    }

    @Test func theParametersAreTheRowsInOrderWithTheirEventsInOrder() throws {
        var first = Self.factsRow()
        first.events = [
            OutboxEvent(
                id: "e1", topic: "t", key: "k/\"1\"", payload: #"{"a":"b/c","q":"\"x\"","é":1}"#,
                environment: "Sandbox",
                bundleId: "b", traceParent: "00-1-2-01", subject: "1000"),
            OutboxEvent(
                id: "e2", topic: "t", key: "k", payload: "{}", environment: "Sandbox", bundleId: "b", traceParent: nil),
        ]
        var second = Self.factsRow()
        second.entry.id = "id-2"
        second.events = [
            OutboxEvent(
                id: "e3", topic: "t", key: "k", payload: "{}", environment: "Sandbox", bundleId: "b", traceParent: nil)
        ]
        let facts = try NotificationFacts.factsRecordset([first, second])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(facts.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["id"] as? String } == ["id", "id-2"])
        #expect(rows[0]["has_transaction"] as? Bool == true && rows[0]["subtype"] as? String == "INITIAL_BUY")
        #expect(rows[0]["received_at"] == nil, "nil is left out")
        let outbox = try NotificationFacts.OutboxColumns([first, second])
        #expect(outbox.ids == ["e1", "e2", "e3"])
        #expect(outbox.payloadTails == [#""a":"b/c","q":"\"x\"","é":1}"#, "}", "}"], "each payload without its {")
        #expect(outbox.keys == ["k/\"1\"", "k", "k"])
        #expect(outbox.traceParents == ["00-1-2-01", "", ""] && outbox.subjects == ["1000", "", ""])
        #expect(try NotificationFacts.factsRecordset([]) == "[]")
        #expect(try NotificationFacts.OutboxColumns([]).columns.allSatisfy(\.isEmpty))
    }

    @Test func anEventWhosePayloadIsNoObjectIsRefused() throws {
        let event = OutboxEvent(
            id: "e", topic: "t", key: "k", payload: "[]", environment: "Sandbox", bundleId: "b", traceParent: nil)
        var columns = try NotificationFacts.OutboxColumns([])
        #expect(throws: StorageError.self) { try columns.append(event) }
        #expect(columns.ids.isEmpty)
    }

    @Test func everyInsertSelectsOneKnownValuePerColumn() throws {
        let sql = NotificationFacts.WriteStatement.sql
        let inserts = Self.inserts(sql)
        #expect(
            inserts.map(\.table) == [
                "notification_log", "transactions", "renewal_infos", "subscriptions", "entitlements", "event_sequences",
                "outbox",
            ])
        // Besides the recordsets' columns, what the statement derives: each subject's count of events (`n`), and each
        // event's number and its JSON with the number in it.
        let derived = ["n", "sequence", "sequenced_payload"]
        let known = Set(try Self.recordsetColumns(sql, alias: "i") + Self.recordsetColumns(sql, alias: "e") + derived)
        for insert in inserts {
            #expect(
                insert.columns.count == insert.values.count,
                "\(insert.table): \(insert.columns.count) columns, \(insert.values.count) values")
            for value in insert.values where !value.hasSuffix("()") {
                let name = String(value.split(separator: ":")[0])
                #expect(known.contains(name), "\(insert.table) selects \(value), which is no recordset column")
            }
        }
    }
}
