/// Watches the offsets a consumer hands on, partition by partition, and decides what to do with a record that comes
/// after a gap.
///
/// The pipeline's topics are neither compacted nor written in transactions, so a partition's offsets follow one another
/// without holes: a record past the next expected offset means records before it were not readable when it was. Tansu
/// 0.6 does that: it moves a partition's end before it stores the batch, so a consumer tailing a partition that several
/// producers write can fetch a later batch while an earlier one is not stored yet, and librdkafka moves on past the
/// earlier one for good (measured: 16 of 3,200 records, one whole batch, skipped by a tailing consumer). The guard has
/// the partition read again from the expected offset until the missing records arrive, and accepts a gap only once it
/// has lasted `confirmation` (a compacted topic, transaction markers, records deleted before they were read). The
/// expected offset of a partition's first record after an assignment is where the group's reading starts (its
/// committed offset), so a batch hidden there is read again too.
///
/// A plain value: ``KafkaConsumer`` feeds it, does the reading again and logs what it decides.
struct OffsetGapGuard: Sendable {
    /// What to do with a record.
    enum Verdict: Equatable, Sendable {
        /// Hand it on.
        case deliver
        /// Hand it on; it is the first of records that were missing and arrived after reading again.
        case deliverArrived(missing: Range<Int64>)
        /// Hand it on after a gap that lasted the confirmation time: those offsets are missing for good.
        case deliverAfterGap(missing: Range<Int64>)
        /// Drop it and read the partition again from `from`; `firstSighting` is false while a gap is being confirmed.
        case readAgain(from: Int64, missing: Range<Int64>, firstSighting: Bool)
    }

    /// A topic and partition.
    struct Partition: Hashable, Sendable {
        var topic: String
        var partition: Int32
    }

    /// A gap seen and not settled yet.
    private struct Suspicion: Sendable {
        var missing: Range<Int64>
        var since: ContinuousClock.Instant
    }

    /// What the guard knows of one partition.
    private struct State: Sendable {
        /// The offset after the last record handed on.
        var next: Int64
        var suspicion: Suspicion?
    }

    /// How long a gap must last before it is accepted.
    let confirmation: Duration
    private var partitions: [Partition: State] = [:]
    /// The gaps decided about so far, by how they ended.
    private(set) var counts = KafkaConsumer.GapCounts()

    /// Creates a guard that accepts a gap after `confirmation`.
    init(confirmation: Duration = .seconds(5)) {
        self.confirmation = confirmation
    }

    // MARK: Deciding

    /// Decides about the record at `offset` of `partition`, seen at `now`, and counts the gap it begins, fills or
    /// accepts. `readingStart` gives the offset the group's reading of the partition starts at: its committed offset,
    /// or the log's first offset when the group committed none (nil when the broker does not say). It is asked on the
    /// first record of an assignment, on a new gap and before a gap is accepted, never for records in order.
    mutating func observe(
        _ partition: Partition, offset: Int64, at now: ContinuousClock.Instant, readingStart: () -> Int64?
    ) -> Verdict {
        let verdict = self.decide(partition, offset: offset, at: now, readingStart: readingStart)
        switch verdict {
        case .deliver, .readAgain(_, _, firstSighting: false): break
        case .readAgain(_, _, firstSighting: true): self.counts.seen += 1
        case .deliverArrived: self.counts.filled += 1
        case .deliverAfterGap: self.counts.accepted += 1
        }
        return verdict
    }

    /// The verdict of ``observe(_:offset:at:readingStart:)``, with the partition's state moved on.
    private mutating func decide(
        _ partition: Partition, offset: Int64, at now: ContinuousClock.Instant, readingStart: () -> Int64?
    ) -> Verdict {
        guard let state = self.partitions[partition], offset >= state.next else {
            // The first record of an assignment: this process's first of the partition, or one from further back when
            // a rebalance has the partition read again from the committed offset. The reading starts there, so a
            // later first record means the batch at the start was not readable yet.
            return self.suspect(partition, from: readingStart(), before: offset, at: now)
        }
        if offset == state.next {
            self.partitions[partition] = State(next: offset + 1)
            guard let suspicion = state.suspicion else { return .deliver }
            return .deliverArrived(missing: suspicion.missing)
        }
        guard let suspicion = state.suspicion, suspicion.missing.lowerBound == state.next else {
            // A new gap. Its start may be the committed offset another member left when the partition came back here.
            return self.suspect(partition, from: max(state.next, readingStart() ?? state.next), before: offset, at: now)
        }
        guard now - suspicion.since >= self.confirmation else {
            self.partitions[partition]?.suspicion = Suspicion(missing: state.next..<offset, since: suspicion.since)
            return .readAgain(from: state.next, missing: state.next..<offset, firstSighting: false)
        }
        // The gap lasted. If the group committed past it meanwhile (the partition was read elsewhere while this
        // member was away from it), nothing is missing; otherwise only what lies after the committed offset is.
        self.partitions[partition] = State(next: offset + 1)
        let start = max(state.next, readingStart() ?? state.next)
        guard start < offset else { return .deliver }
        return .deliverAfterGap(missing: start..<offset)
    }

    /// Hands on the record at `offset` when reading starts at or after it (or nowhere known); otherwise holds it back
    /// and has the partition read again from `start`.
    private mutating func suspect(
        _ partition: Partition, from start: Int64?, before offset: Int64, at now: ContinuousClock.Instant
    ) -> Verdict {
        guard let start, start < offset else {
            self.partitions[partition] = State(next: offset + 1)
            return .deliver
        }
        self.partitions[partition] = State(next: start, suspicion: Suspicion(missing: start..<offset, since: now))
        return .readAgain(from: start, missing: start..<offset, firstSighting: true)
    }
}
