import Foundation

/// A task executor with one thread of its own, which nothing else runs on.
///
/// Apple's performance test times each answer of the team's real-time URL. In tests the sim runs inside the test
/// process, whose cooperative pool has as many threads as the machine has cores (two here) and serves every test
/// running at the same time: when other tests held both threads (a blocking wait, a long stretch of signing), the
/// sim's clock went on while the answers that had arrived waited for a thread, and two answers given in milliseconds
/// were timed at 10 s. The test's tasks prefer this executor (`withTaskExecutorPreference`), so an answer is timed
/// when it arrives, as Apple's own clients time it, whatever the rest of the process is doing.
@_spi(Testing) public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// Guards `jobs` and wakes the thread when one is added.
    private let condition = NSCondition()
    /// Jobs waiting to run, in the order they were enqueued.
    private var jobs: [UnownedJob] = []

    /// Starts the thread, named `name` (its first 15 bytes, Linux's limit; it waits for jobs for as long as the
    /// process lives).
    @_spi(Testing) public init(name: String) {
        // Named from inside, in the kernel's own file: a Linux thread starts with its creator's name, and
        // Foundation's `Thread.name` did not always reach the kernel's thread (a CI run read the creator's name,
        // "oot.default-qos", on every job). `pthread_setname_np` is not in Swift's Glibc module.
        let kernelName = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        let thread = Thread { [self] in
            try? kernelName.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            self.runJobs()
        }
        thread.start()
    }

    // MARK: TaskExecutor

    /// Queues a job for the thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.condition.lock()
        self.jobs.append(job)
        self.condition.signal()
        self.condition.unlock()
    }

    // MARK: The thread

    /// Runs the queued jobs one after the other, waiting when there are none.
    private func runJobs() {
        while true {
            self.condition.lock()
            while self.jobs.isEmpty { self.condition.wait() }
            let batch = self.jobs
            self.jobs.removeAll(keepingCapacity: true)
            self.condition.unlock()
            for job in batch { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }
}
