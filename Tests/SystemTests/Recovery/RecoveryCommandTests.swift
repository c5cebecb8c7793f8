import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Entitlements
import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// `iapctl replay` and `iapctl test-notification`, the real binary, against a real broker and the sim.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct RecoveryCommandTests {
    @Test func replayMovesDeadLettersBackToTheirTopicOncePerGroup() async throws {
        try await withLocalBroker { bootstrap in
            let topics = PipelineTopics()
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            try await kafka.createTopics(topics.all.map { ($0, 1) })
            func deadLetter(_ reason: String, topic: String, key: String, value: String) throws -> ProducerRecord {
                let original = RejectedNotificationRecord.OriginalMessage(
                    topic: topic, partition: 0, offset: 7, key: key, value: value,
                    headers: ["received-at": "1700000000000"])
                let record = RejectedNotificationRecord(
                    reason: reason, detail: "test", notificationUUID: nil, original: original)
                return ProducerRecord(topic: topics.rejected, key: Array(key.utf8), value: try record.encoded())
            }
            try await kafka.produce([
                try deadLetter("certificate", topic: topics.raw, key: "sub-1", value: #"{"signedPayload":"a.b.c"}"#),
                try deadLetter(
                    "status-request", topic: topics.statusRequests, key: "sub-2", value: #"{"requestId":"r"}"#),
                try deadLetter("certificate", topic: topics.raw, key: "sub-3", value: #"{"signedPayload":"d.e.f"}"#),
                ProducerRecord(topic: topics.rejected, key: nil, value: Array("not a DLQ record".utf8)),
            ])
            let environment = ["KAFKA_BOOTSTRAP_SERVERS": bootstrap]
            let (status, output) = try await IAPCtlProcess.run(
                ["replay", "--reason", "certificate", "--quiet-ms", "2000"], environment: environment)
            #expect(status == 0, "\(output)")
            #expect(output.contains("2 replayed (2 to \(topics.raw)), 2 skipped"), "\(output)")
            let raw = try await kafka.readAll(topics.raw, atLeast: 2, quiet: .seconds(1), timeout: .seconds(20))
            #expect(raw.map { $0.key.map { String(decoding: $0, as: UTF8.self) } } == ["sub-1", "sub-3"])
            #expect(raw.first?.value == Array(#"{"signedPayload":"a.b.c"}"#.utf8), "the exact original value")
            #expect(raw.first?.header("received-at")?.text == "1700000000000")
            #expect(raw.first?.header("replayed-from")?.text?.hasPrefix(topics.rejected) == true)

            let (again, secondOutput) = try await IAPCtlProcess.run(
                ["replay", "--quiet-ms", "2000", "--wait-ms", "4000"], environment: environment)
            #expect(again == 0 && secondOutput.contains("0 replayed"), "the group remembers: \(secondOutput)")
            let (other, otherOutput) = try await IAPCtlProcess.run(
                ["replay", "--group", "second-look", "--reason", "status-request", "--quiet-ms", "2000"],
                environment: environment)
            #expect(other == 0 && otherOutput.contains("1 replayed (1 to \(topics.statusRequests))"), "\(otherOutput)")
        }
    }

    @Test func testNotificationWaitsUntilTheNotificationArrived() async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(
                customers: 1, seed: 1, configure: { $0.ingestURL = "http://127.0.0.1:\($0.port)/sim/sink" }
            ) { sim in
                let directory = try LocalComponents.temporaryDirectory("test-notification")
                let environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                let (status, output) = try await IAPCtlProcess.run(
                    ["test-notification", "--timeout", "20"], environment: environment)
                #expect(status == 0, "\(output)")
                // Every configured app in every accepted environment, each with its own bid and base URL.
                #expect(
                    output.contains("delivered: com.example.subscriptions (Production): notificationUUID"), "\(output)")
                #expect(
                    output.contains("delivered: com.example.subscriptions (Sandbox): notificationUUID"), "\(output)")
                #expect(await sim.stats.calls["test"] == 2)
                let (narrowed, narrowedOutput) = try await IAPCtlProcess.run(
                    ["test-notification", "--timeout", "20", "--environment", "Sandbox"], environment: environment)
                #expect(narrowed == 0 && !narrowedOutput.contains("(Production)"), "\(narrowedOutput)")
                #expect(await sim.stats.calls["test"] == 3)

                var broken = environment
                broken["APPSTORE_API_KEY_ID"] = "WRONGKEY"
                let (refused, refusedOutput) = try await IAPCtlProcess.run(
                    ["test-notification", "--timeout", "5"], environment: broken)
                #expect(refused == 1 && refusedOutput.contains("401"), "\(refusedOutput)")
            }
        }
    }
}

// MARK: - iapctl resync

/// `iapctl resync`, the real binary, against the sim and a real broker: every transaction of each listed
/// purchase (by id, by receipt) as an app-purchase record bound to its app user, each subscription's status as
/// a snapshot, a progress line per entry and a summary; a bad entry fails alone.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct ResyncCommandTests {
    @Test func resyncImportsHistoryAndStatusesPerEntry() async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(customers: 30, seed: 5) { sim in
                let topics = PipelineTopics()
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                try await kafka.createTopics(topics.all.map { ($0, 1) })
                let purchases = sim.simulator.scenario.purchases.values.sorted {
                    $0.originalTransactionId < $1.originalTransactionId
                }
                let subscriptions = purchases.filter { $0.productType == .autoRenewableSubscription }
                try #require(subscriptions.count >= 2)
                let byId = subscriptions[0], byReceipt = subscriptions[1]
                let directory = try LocalComponents.temporaryDirectory("resync")
                let file = directory.appendingPathComponent("customers.txt")
                try """
                # app user, transaction id or receipt
                user-1,\(byId.transactions.last!.transactionId!)
                user-2,\(SimHarness.legacyReceipt(byReceipt.transactions.first!.transactionId!))
                user-3,99999999999

                """.write(to: file, atomically: true, encoding: .utf8)
                let environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                let (status, output) = try await IAPCtlProcess.run(
                    ["resync", "--file", file.path], environment: environment)
                #expect(status == 1, "one entry failed: \(output)")
                let transactions = byId.transactions.count + byReceipt.transactions.count
                #expect(
                    output.contains(
                        "resync: 3 entries, \(transactions) transactions, 2 subscription statuses, 1 failed"),
                    "\(output)")
                #expect(output.contains("] 1/3 33.3%") && output.contains("failed: line 4 (99999999999)"), "\(output)")

                let records = try await kafka.readAll(
                    topics.verified, atLeast: transactions + 2, quiet: .seconds(1), timeout: .seconds(20))
                let purchasesWritten = try records.filter { $0.header("schema")?.text == AppPurchaseRecord.schema }
                    .map { try JSONDecoder().decode(AppPurchaseRecord.self, from: Data($0.value ?? [])) }
                let snapshots = try records.filter { $0.header("schema")?.text == StatusSnapshot.schema }
                    .map { try JSONDecoder().decode(StatusSnapshot.self, from: Data($0.value ?? [])) }
                #expect(purchasesWritten.count == transactions && purchasesWritten.allSatisfy { $0.source == .resync })
                #expect(
                    Set(purchasesWritten.filter { $0.subject == byId.originalTransactionId }.map { $0.appUserId ?? "" })
                        == ["user-1"])
                #expect(
                    Set(
                        purchasesWritten.filter { $0.subject == byReceipt.originalTransactionId }.map {
                            $0.appUserId ?? ""
                        }) == ["user-2"])
                #expect(Set(snapshots.map(\.subject)) == [byId.originalTransactionId, byReceipt.originalTransactionId])
                #expect(snapshots.first { $0.subject == byId.originalTransactionId }?.status == byId.status?.rawValue)
            }
        }
    }
}

// MARK: - iapctl resync, interrupted and resumed

/// `iapctl resync` of many subscriptions, the real binary against the sim and a real broker: stopped with
/// SIGINT at a point the sim holds it (no race: the sim holds history calls after a third of them), it finishes
/// the entries in flight, journals them and exits 130; run again, it does only what is left. Every subscription's
/// history and status is asked of Apple once and reaches the pipeline once.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(5))) struct ResyncResumeTests {
    @Test func anInterruptedResyncResumesWithoutRepeatingAnEntry() async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(customers: 150, seed: 9) { sim in
                let topics = PipelineTopics()
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                try await kafka.createTopics(topics.all.map { ($0, 3) })
                let subscriptions = sim.simulator.scenario.purchases.values
                    .filter { $0.productType == .autoRenewableSubscription }
                    .sorted { $0.originalTransactionId < $1.originalTransactionId }
                try #require(subscriptions.count >= 60, "\(subscriptions.count) subscriptions")
                let directory = try LocalComponents.temporaryDirectory("resync-resume")
                let file = directory.appendingPathComponent("subscriptions.txt")
                try subscriptions.map { $0.transactions.last!.transactionId! }.joined(separator: "\n")
                    .write(to: file, atomically: true, encoding: .utf8)
                let environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                let arguments = ["resync", "--file", file.path, "--rate", "500", "--concurrency", "4"]

                // A third of the history calls answered, then the sim holds the rest: the tool stops there.
                let held = subscriptions.count / 3
                await sim.setFaults(SimStore.Faults(holdHistoryAfter: held))
                let log = directory.appendingPathComponent("first.log")
                let first = try ServiceProcess.start("iapctl", arguments, environment: environment, log: log)
                try #require(
                    try await Polling.until(looks: 1200, every: .milliseconds(100)) {
                        await sim.stats.historyCallsHeld == 4
                    }, "all four entries in flight wait on the sim")
                kill(first.processIdentifier, SIGINT)
                try #require(
                    try await Polling.until(looks: 600, every: .milliseconds(100)) {
                        try String(contentsOf: log, encoding: .utf8).contains("finishing the work in flight")
                    }, "the tool took the interrupt")
                await sim.setFaults(SimStore.Faults())
                let status = try await ServiceProcess.exitStatus(of: first)
                let firstOutput = try String(contentsOf: log, encoding: .utf8)
                #expect(status == 130, "\(firstOutput)")
                #expect(firstOutput.contains("interrupted; run the same command again to resume"), "\(firstOutput)")
                #expect(
                    firstOutput.contains("ETA") && firstOutput.contains("resync ["), "a progress bar: \(firstOutput)")
                let journal = try String(contentsOf: URL(fileURLWithPath: file.path + ".done"), encoding: .utf8)
                let done = journal.split(separator: "\n").dropFirst().count
                #expect(done >= held && done < subscriptions.count, "\(done) of \(subscriptions.count) journaled")

                let (again, secondOutput) = try await IAPCtlProcess.run(arguments, environment: environment)
                #expect(again == 0, "\(secondOutput)")
                #expect(
                    secondOutput.contains("resync: \(subscriptions.count) entries, \(done) already done"),
                    "\(secondOutput)")
                #expect(secondOutput.contains("resync: \(subscriptions.count - done) entries"), "\(secondOutput)")

                // Apple was asked once per subscription, and the pipeline got each transaction and status once.
                #expect(await sim.stats.calls["subscriptions"] == subscriptions.count)
                let transactions = subscriptions.map(\.transactions.count).reduce(0, +)
                let records = try await kafka.readAll(
                    topics.verified, atLeast: transactions + subscriptions.count, quiet: .seconds(2),
                    timeout: .seconds(60))
                let purchases = try records.filter { $0.header("schema")?.text == AppPurchaseRecord.schema }
                    .map { try JSONDecoder().decode(AppPurchaseRecord.self, from: Data($0.value ?? [])) }
                let snapshots = records.filter { $0.header("schema")?.text == StatusSnapshot.schema }
                let perTransaction = Dictionary(grouping: purchases, by: { $0.transaction.transactionId ?? "" })
                #expect(purchases.count == transactions, "\(purchases.count) records for \(transactions) transactions")
                #expect(perTransaction.values.allSatisfy { $0.count == 1 }, "no transaction imported twice")
                #expect(snapshots.count == subscriptions.count, "one status per subscription")
            }
        }
    }
}
