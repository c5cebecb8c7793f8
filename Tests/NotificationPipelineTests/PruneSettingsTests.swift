import NotificationPipeline
import ServiceRuntime
import Storage
import Testing

/// Pruning's settings: durations with units, and every unsafe value stops the service at start.
@Suite struct PruneSettingsTests {
    @Test func defaultsAndUnits() throws {
        let defaults = try PruneSettings(EnvironmentSettings([:]))
        #expect(defaults == PruneSettings())
        #expect(defaults.windows.notificationLog == .seconds(400 * 86_400) && defaults.isScheduled)
        let set = try PruneSettings(
            EnvironmentSettings([
                "PRUNE_INTERVAL": "0s", "RETAIN_PUBLISHED_OUTBOX": "36h", "RETAIN_STATUS_REQUESTS": "90m",
                "RETAIN_NOTIFICATION_LOG": "183d", "PRUNE_BATCH": "100",
            ]))
        #expect(!set.isScheduled, "0s turns the schedule off (iapctl prune still works)")
        #expect(set.windows.publishedOutbox == .seconds(36 * 3_600) && set.windows.statusRequests == .seconds(5_400))
    }

    @Test(arguments: [
        ["RETAIN_NOTIFICATION_LOG": "30d"], ["RETAIN_PUBLISHED_OUTBOX": "7 days"], ["RETAIN_DEAD_LETTERS": "-1d"],
        ["PRUNE_BATCH": "10"], ["PRUNE_INTERVAL": "1w"],
        ["RETAIN_REPLAYED_DEAD_LETTERS": "200d", "RETAIN_DEAD_LETTERS": "180d"],
    ])
    func anUnsafeOrMalformedValueStopsTheService(_ values: [String: String]) {
        #expect(throws: SettingsError.self) { try PruneSettings(EnvironmentSettings(values)) }
    }
}
