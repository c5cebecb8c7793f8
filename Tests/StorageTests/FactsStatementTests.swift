import EntitlementDecisions
import Foundation
import TestSupport
import Testing

@testable import Entitlements
@testable import Storage

/// The wave's facts statement reads its rows with `jsonb_to_recordset`, which silently drops a JSON key that has
/// no column and reads NULL for a column that has no key; and its INSERTs pair columns with values by position.
/// These tests tie the statement's column lists to the record types, so adding a field takes edits that a test
/// checks together.
@Suite struct FactsStatementTests {
    /// The column names of `jsonb_to_recordset(…) AS alias(name type, …)` in `sql`.
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

    /// The facts of a real notification, as the repository builds them.
    static func factsRecord() -> NotificationFacts.FactsRecord {
        let record = VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "1000", day: 0)
        let entry = NotificationLogEntry(
            id: "id", type: "SUBSCRIBED", subtype: "INITIAL_BUY", subject: "1000", environment: "Sandbox",
            bundleId: "com.example.app",
            signedDate: 1, receivedAt: nil)
        let update = EntitlementUpdate(outcome: .applied, detail: "", advancesSubject: true)
        return NotificationFacts.FactsRecord(
            .init(
                entry: entry, update: update, notification: record.notification, customer: "1000", entitlement: nil,
                events: []))
    }

    @Test func theFactsRecordsetHasExactlyTheRecordsFields() throws {
        let fields = Mirror(reflecting: Self.factsRecord()).children.compactMap(\.label)
        let columns = try Self.recordsetColumns(NotificationFacts.WriteStatement.sql, alias: "i")
        #expect(fields.count > 60)
        #expect(
            columns == fields,
            "columns without a field: \(Set(columns).subtracting(fields).sorted()), fields without a column: \(Set(fields).subtracting(columns).sorted())"
        )
    }

    @Test func theOutboxRecordsetHasExactlyTheEventsFields() throws {
        let event = NotificationFacts.EventRecord(
            position: 0, id: "e", topic: "t", key: "k", payload: "{}", environment: "Sandbox", bundle_id: "b")
        let fields = Mirror(reflecting: event).children.compactMap(\.label)
        #expect(try Self.recordsetColumns(NotificationFacts.WriteStatement.sql, alias: "e") == fields)
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
