/// Watches the offsets a consumer hands on, partition by partition, and decides what to do with a record that comes
/// after a gap.
///
/// The pipeline's topics are neither compacted nor written in transactions, so a partition's offsets follow one another
/// without holes: a record past the next expected offset means records before it were not readable when it was. Tansu
/// 0.6 does that: it moves a partition's end before it stores the batch, so a consumer tailing a partition that several
/// producers write can fetch a later batch while an earlier one is not stored yet, and librdkafka moves on past the
/// earlier one for good (measured: 16 of 3,200 records, one whole batch, skipped by a tailing consumer). The guard has
/// the partition read again from the expected offset until the missing records arrive, and accepts a gap only once it
/// has lasted `confirmation` (a compacted topic, transaction markers, records deleted before they were read).
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
    /// accepts. `committed` gives the group's committed offset of the partition (nil when unknown); it is asked only on
    /// a new gap, where a start past the gap means the partition was assigned anew after another member had read it.
    mutating func observe(
        _ partition: Partition, offset: Int64, at now: ContinuousClock.Instant, committed: () -> Int64?
    ) -> Verdict {
        let verdict = self.decide(partition, offset: offset, at: now, committed: committed)
        switch verdict {
        case .deliver, .readAgain(_, _, firstSighting: false): break
        case .readAgain(_, _, firstSighting: true): self.counts.seen += 1
        case .deliverArrived: self.counts.filled += 1
        case .deliverAfterGap: self.counts.accepted += 1
        }
        return verdict
    }

    /// The verdict of ``observe(_:offset:at:committed:)``, with the partition's state moved on.
    private mutating func decide(
        _ partition: Partition, offset: Int64, at now: ContinuousClock.Instant, committed: () -> Int64?
    ) -> Verdict {
        guard var state = self.partitions[partition] else {
            self.partitions[partition] = State(next: offset + 1)
            return .deliver
        }
        defer { self.partitions[partition] = state }
        if offset < state.next {
            // Read again from further back: a new assignment starting at the committed offset. Nothing is missing.
            state = State(next: offset + 1)
            return .deliver
        }
        if offset == state.next {
            state.next = offset + 1
            guard let suspicion = state.suspicion else { return .deliver }
            state.suspicion = nil
            return .deliverArrived(missing: suspicion.missing)
        }
        if let suspicion = state.suspicion, suspicion.missing.lowerBound == state.next {
            let missing = state.next..<offset
            if now - suspicion.since >= self.confirmation {
                state = State(next: offset + 1)
                return .deliverAfterGap(missing: missing)
            }
            state.suspicion = Suspicion(missing: missing, since: suspicion.since)
            return .readAgain(from: state.next, missing: missing, firstSighting: false)
        }
        // A new gap. Its start may be the committed offset another member left when the partition came back here.
        let start = max(state.next, committed() ?? state.next)
        guard start < offset else {
            state = State(next: offset + 1)
            return .deliver
        }
        state = State(next: start, suspicion: Suspicion(missing: start..<offset, since: now))
        return .readAgain(from: start, missing: start..<offset, firstSighting: true)
    }
}
