public import ServiceRuntime
public import Storage

/// What is pruned and how often (`Pruning`): the entitlement-updater runs it every `PRUNE_INTERVAL` (`1h`; `0s`
/// turns it off), `iapctl prune` once. Windows: `RETAIN_PUBLISHED_OUTBOX` (`7d`), `RETAIN_OUTBOX_PUBLICATIONS`
/// (`1h`), `RETAIN_REPLAYED_DEAD_LETTERS` (`30d`), `RETAIN_DEAD_LETTERS` (`180d`), `RETAIN_STATUS_REQUESTS` (`7d`), `RETAIN_NOTIFICATION_LOG` (`400d`, at
/// least `183d`: Apple's notification history and retries could bring back an entry pruned sooner). Batches of
/// `PRUNE_BATCH` rows (`5000`, 100 to 100000).
public struct PruneSettings: Sendable, Hashable {
    public var interval: Duration = .seconds(3_600)
    public var batch = 5_000
    public var windows = RetentionWindows()

    /// The defaults.
    public init() {}

    /// Reads the variables; a malformed or unsafe one stops the service.
    public init(_ settings: EnvironmentSettings) throws(SettingsError) {
        self.interval = try settings.duration("PRUNE_INTERVAL", default: self.interval)
        self.batch = try settings.int("PRUNE_BATCH", default: self.batch)
        guard (100...100_000).contains(self.batch) else {
            throw SettingsError("PRUNE_BATCH must be 100 to 100000, not \(self.batch)")
        }
        let defaults = RetentionWindows()
        self.windows.publishedOutbox = try settings.duration(
            "RETAIN_PUBLISHED_OUTBOX", default: defaults.publishedOutbox)
        self.windows.outboxPublications = try settings.duration(
            "RETAIN_OUTBOX_PUBLICATIONS", default: defaults.outboxPublications)
        self.windows.replayedDeadLetters = try settings.duration(
            "RETAIN_REPLAYED_DEAD_LETTERS", default: defaults.replayedDeadLetters)
        self.windows.deadLetters = try settings.duration("RETAIN_DEAD_LETTERS", default: defaults.deadLetters)
        self.windows.statusRequests = try settings.duration("RETAIN_STATUS_REQUESTS", default: defaults.statusRequests)
        self.windows.notificationLog = try settings.duration(
            "RETAIN_NOTIFICATION_LOG", default: defaults.notificationLog)
        guard self.windows.notificationLog >= RetentionWindows.minimumNotificationLog else {
            throw SettingsError(
                "RETAIN_NOTIFICATION_LOG must be at least 183d (Apple's 180-day notification history and 3 days of "
                    + "retries could deliver a pruned notification again, and it would be applied twice)")
        }
        guard self.windows.replayedDeadLetters <= self.windows.deadLetters else {
            throw SettingsError("RETAIN_REPLAYED_DEAD_LETTERS must not exceed RETAIN_DEAD_LETTERS")
        }
    }

    /// Whether the updater prunes on its own.
    public var isScheduled: Bool { self.interval > .zero }
}
