import AppStoreModels
import Foundation

/// A progress bar with rate and ETA for long operator commands, on standard error: redrawn in place on a
/// terminal, one line per whole percent (or every five seconds) otherwise, so logs of a job stay readable.
struct ProgressBar {
    let total: Int
    /// Done before this run (a resumed journal): counted as done, not in the rate.
    let alreadyDone: Int
    let started: ContinuousClock.Instant
    let interactive: Bool
    private var lastPercent = -1
    private var lastPrinted: ContinuousClock.Instant

    init(total: Int, alreadyDone: Int, interactive: Bool = isatty(STDERR_FILENO) == 1) {
        self.total = total
        self.alreadyDone = alreadyDone
        self.started = .now
        self.lastPrinted = self.started
        self.interactive = interactive
    }

    /// The line for `done` entries in this run (besides `alreadyDone`) and `failed` ones, at `now`.
    func line(done: Int, failed: Int, now: ContinuousClock.Instant = .now) -> String {
        let finished = self.alreadyDone + done + failed
        let fraction = self.total == 0 ? 1 : Double(finished) / Double(self.total)
        let width = 24
        let filled = min(width, Int(fraction * Double(width)))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let seconds = (now - self.started).timeInterval
        let rate = seconds > 0 ? Double(done + failed) / seconds : 0
        let remaining = self.total - finished
        let eta = rate > 0 ? Self.duration(Double(remaining) / rate) : "--"
        return "resync [\(bar)] \(finished)/\(self.total) \(String(format: "%.1f", fraction * 100))% "
            + "\(String(format: "%.1f", rate))/s ETA \(eta), \(failed) failed"
    }

    /// Draws the bar when it changed enough to be worth a line.
    mutating func update(done: Int, failed: Int) {
        let now = ContinuousClock.now
        let finished = self.alreadyDone + done + failed
        let percent = self.total == 0 ? 100 : finished * 100 / self.total
        if self.interactive {
            guard now - self.lastPrinted >= .milliseconds(200) || finished == self.total else { return }
            StandardStreams.writeError("\r" + self.line(done: done, failed: failed, now: now), newline: false)
        } else {
            guard percent != self.lastPercent || now - self.lastPrinted >= .seconds(5) else { return }
            StandardStreams.writeError(self.line(done: done, failed: failed, now: now))
        }
        self.lastPercent = percent
        self.lastPrinted = now
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        if self.interactive { StandardStreams.writeError("") }
    }

    /// `1h02m`, `3m07s`, `42s`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        if total >= 3600 { return "\(total / 3600)h\(String(format: "%02d", total % 3600 / 60))m" }
        if total >= 60 { return "\(total / 60)m\(String(format: "%02d", total % 60))s" }
        return "\(total)s"
    }
}
