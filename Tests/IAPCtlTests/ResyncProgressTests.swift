import Foundation
import TestSupport
import Testing

@testable import IAPCtl

/// The pieces that make a long resync resumable and watchable: the journal (what is done survives the process,
/// a foreign file is refused) and the progress bar's figures (share, rate, ETA).
@Suite struct ResyncProgressTests {
    @Test func theJournalKeepsWhatIsDoneAcrossRuns() throws {
        let directory = try LocalComponents.temporaryDirectory("journal")
        let path = directory.appendingPathComponent("entries.txt.done").path
        let first = try ResyncJournal(path: path)
        #expect(first.done.isEmpty)
        try first.record("user-1,1000")
        try first.record("2000")
        let second = try ResyncJournal(path: path)
        #expect(second.done == ["user-1,1000", "2000"])
        try second.record("3000")
        #expect(try ResyncJournal(path: path).done == ["user-1,1000", "2000", "3000"])

        let foreign = directory.appendingPathComponent("entries.txt").path
        try "1000\n2000\n".write(toFile: foreign, atomically: true, encoding: .utf8)
        #expect(throws: ResyncJournalError.self) { try ResyncJournal(path: foreign) }
        #expect(try String(contentsOfFile: foreign, encoding: .utf8) == "1000\n2000\n", "left as it was")
    }

    @Test func theBarShowsShareRateAndETA() {
        let bar = ProgressBar(total: 1000, alreadyDone: 400, interactive: false)
        let line = bar.line(done: 100, failed: 0, now: bar.started + .seconds(10))
        #expect(line == "resync [############............] 500/1000 50.0% 10.0/s ETA 50s, 0 failed", "\(line)")
        let start = bar.line(done: 0, failed: 0, now: bar.started)
        #expect(start.hasSuffix("ETA --, 0 failed"), "\(start)")
        #expect(ProgressBar.duration(42) == "42s")
        #expect(ProgressBar.duration(187) == "3m07s")
        #expect(ProgressBar.duration(3720) == "1h02m")
    }
}
