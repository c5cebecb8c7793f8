import Testing

@testable import RdKafka

/// The decisions about records after a gap, without a broker: read the partition again, hand on what arrives, accept
/// a gap only once it has lasted the confirmation time, take a new assignment's committed start as no gap, and check
/// an assignment's first record against where the group's reading starts.
@Suite struct OffsetGapGuardTests {
    let partition = OffsetGapGuard.Partition(topic: "t", partition: 3)
    let start = ContinuousClock.now

    /// The guard with offsets 0...9 of `partition` handed on.
    func guardAfterTenRecords() -> OffsetGapGuard {
        var gapGuard = OffsetGapGuard(confirmation: .seconds(5))
        for offset in Int64(0)..<10 {
            #expect(gapGuard.observe(self.partition, offset: offset, at: self.start) { nil } == .deliver)
        }
        return gapGuard
    }

    @Test func consecutiveRecordsAndRecordsReadAgainAreHandedOn() {
        var gapGuard = self.guardAfterTenRecords()
        // A new assignment starting from an older committed offset: records again, nothing missing.
        #expect(gapGuard.observe(self.partition, offset: 4, at: self.start) { nil } == .deliver)
        #expect(gapGuard.observe(self.partition, offset: 5, at: self.start) { nil } == .deliver)
        // Each partition is followed on its own.
        let other = OffsetGapGuard.Partition(topic: "t", partition: 1)
        #expect(gapGuard.observe(other, offset: 500, at: self.start) { nil } == .deliver)
    }

    @Test func aRecordAfterAGapIsDroppedAndThePartitionReadAgainUntilTheMissingOnesArrive() {
        var gapGuard = self.guardAfterTenRecords()
        var asked = 0
        let first = gapGuard.observe(self.partition, offset: 26, at: self.start) {
            asked += 1
            return 8
        }
        #expect(first == .readAgain(from: 10, missing: 10..<26, firstSighting: true))
        #expect(asked == 1, "a new gap asks for the committed offset once")
        // The broker still shows the later batch first: read again, without asking again.
        let again = gapGuard.observe(self.partition, offset: 26, at: self.start + .seconds(1)) {
            asked += 1
            return 8
        }
        #expect(again == .readAgain(from: 10, missing: 10..<26, firstSighting: false))
        #expect(asked == 1)
        // Then the missing batch arrives, and everything after it.
        #expect(
            gapGuard.observe(self.partition, offset: 10, at: self.start + .seconds(1)) { nil }
                == .deliverArrived(missing: 10..<26))
        for offset in Int64(11)...30 {
            #expect(gapGuard.observe(self.partition, offset: offset, at: self.start + .seconds(1)) { nil } == .deliver)
        }
        #expect(
            gapGuard.counts == .init(seen: 1, filled: 1), "one gap seen (not counted again while read again), filled")
    }

    @Test func aGapThatLastsTheConfirmationTimeIsAcceptedOnce() {
        var gapGuard = self.guardAfterTenRecords()
        #expect(
            gapGuard.observe(self.partition, offset: 20, at: self.start) { nil }
                == .readAgain(from: 10, missing: 10..<20, firstSighting: true))
        #expect(
            gapGuard.observe(self.partition, offset: 20, at: self.start + .milliseconds(4_999)) { nil }
                == .readAgain(from: 10, missing: 10..<20, firstSighting: false))
        #expect(
            gapGuard.observe(self.partition, offset: 20, at: self.start + .seconds(5)) { nil }
                == .deliverAfterGap(missing: 10..<20))
        #expect(gapGuard.observe(self.partition, offset: 21, at: self.start + .seconds(5)) { nil } == .deliver)
        #expect(gapGuard.counts == .init(seen: 1, accepted: 1))
    }

    @Test func aGapThatNarrowsKeepsItsFirstSighting() {
        var gapGuard = self.guardAfterTenRecords()
        _ = gapGuard.observe(self.partition, offset: 30, at: self.start) { nil }
        // Part of what was missing became readable, the rest not yet: still the same gap, confirmed from the start.
        #expect(
            gapGuard.observe(self.partition, offset: 20, at: self.start + .seconds(3)) { nil }
                == .readAgain(from: 10, missing: 10..<20, firstSighting: false))
        #expect(
            gapGuard.observe(self.partition, offset: 20, at: self.start + .seconds(5)) { nil }
                == .deliverAfterGap(missing: 10..<20))
    }

    @Test func aNewAssignmentStartingAtTheCommittedOffsetIsNoGap() {
        var gapGuard = self.guardAfterTenRecords()
        // Another member read 10..<40 and committed 40; the partition came back here and starts there.
        #expect(gapGuard.observe(self.partition, offset: 40, at: self.start) { 40 } == .deliver)
        #expect(gapGuard.observe(self.partition, offset: 41, at: self.start) { nil } == .deliver)
        // It committed 50, but the first record readable is 60: only 50..<60 is missing.
        #expect(
            gapGuard.observe(self.partition, offset: 60, at: self.start) { 50 }
                == .readAgain(from: 50, missing: 50..<60, firstSighting: true))
        #expect(
            gapGuard.observe(self.partition, offset: 50, at: self.start) { nil } == .deliverArrived(missing: 50..<60))
    }

    @Test func anUnknownCommittedOffsetReadsAgainFromTheLastRecordHandedOn() {
        var gapGuard = self.guardAfterTenRecords()
        #expect(
            gapGuard.observe(self.partition, offset: 12, at: self.start) { nil }
                == .readAgain(from: 10, missing: 10..<12, firstSighting: true))
    }

    @Test func theFirstRecordOfAPartitionIsCheckedAgainstWhereTheReadingStarts() {
        var gapGuard = OffsetGapGuard(confirmation: .seconds(5))
        var asked = 0
        // A process's first fetch: the group committed 24, but the batch there was not readable yet.
        let first = gapGuard.observe(self.partition, offset: 40, at: self.start) {
            asked += 1
            return 24
        }
        #expect(first == .readAgain(from: 24, missing: 24..<40, firstSighting: true))
        #expect(
            gapGuard.observe(self.partition, offset: 24, at: self.start) { nil } == .deliverArrived(missing: 24..<40))
        // Records in order never ask.
        for offset in Int64(25)...45 {
            #expect(
                gapGuard.observe(self.partition, offset: offset, at: self.start) {
                    asked += 1
                    return nil
                } == .deliver)
        }
        #expect(asked == 1)
        // Another partition whose first record is where the reading starts: no gap.
        let other = OffsetGapGuard.Partition(topic: "t", partition: 0)
        #expect(gapGuard.observe(other, offset: 7, at: self.start) { 7 } == .deliver)
        #expect(gapGuard.counts == .init(seen: 1, filled: 1))
    }

    @Test func aRebalanceReadingFromTheCommittedOffsetIsCheckedToo() {
        var gapGuard = self.guardAfterTenRecords()
        // A rebalance has the partition read again from the committed 4, but the first record readable is 6.
        #expect(
            gapGuard.observe(self.partition, offset: 6, at: self.start) { 4 }
                == .readAgain(from: 4, missing: 4..<6, firstSighting: true))
        #expect(gapGuard.observe(self.partition, offset: 4, at: self.start) { nil } == .deliverArrived(missing: 4..<6))
        #expect(gapGuard.observe(self.partition, offset: 5, at: self.start) { nil } == .deliver)
    }

    @Test func aGapTheGroupCommittedPastMeanwhileIsNotAccepted() {
        var gapGuard = self.guardAfterTenRecords()
        #expect(
            gapGuard.observe(self.partition, offset: 30, at: self.start) { nil }
                == .readAgain(from: 10, missing: 10..<30, firstSighting: true))
        // When the gap has lasted, the group has committed 30: another member read those records.
        #expect(gapGuard.observe(self.partition, offset: 30, at: self.start + .seconds(5)) { 30 } == .deliver)
        #expect(gapGuard.observe(self.partition, offset: 31, at: self.start + .seconds(5)) { nil } == .deliver)
        // A second gap, 32..<40; when it has lasted, the group has committed 35: only 35..<40 is missing for good.
        #expect(
            gapGuard.observe(self.partition, offset: 40, at: self.start + .seconds(6)) { nil }
                == .readAgain(from: 32, missing: 32..<40, firstSighting: true))
        #expect(
            gapGuard.observe(self.partition, offset: 40, at: self.start + .seconds(11)) { 35 }
                == .deliverAfterGap(missing: 35..<40))
        #expect(gapGuard.counts == .init(seen: 2, accepted: 1))
    }
}
