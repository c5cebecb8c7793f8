@_spi(Testing) import AppStoreSimKit
import Foundation
import NIOCore
import NIOPosix
import Testing

/// The thread Apple's performance test is timed on: work that prefers it, child tasks of a group included, runs on
/// it and comes back to it after every suspension (a sleep, a future completed on an event loop), so an answer is
/// never waiting for a thread of the cooperative pool.
@Suite struct DedicatedThreadExecutorTests {
    @Test func childTasksRunOnTheThreadAndResumeThereAfterEachSuspension() async throws {
        let executor = DedicatedThreadExecutor(name: "executor-test")
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let names = await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: [String].self) { group in
                for index in 0..<8 {
                    group.addTask {
                        var seen = [Self.threadName()]
                        try? await Task.sleep(for: .milliseconds(index))
                        seen.append(Self.threadName())
                        // Completed on an event loop's thread, as an HTTP client's answer is.
                        _ = try? await loop.scheduleTask(in: .milliseconds(1)) { index }.futureResult.get()
                        seen.append(Self.threadName())
                        return seen
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
        }
        #expect(names.count == 24)
        #expect(Set(names) == ["executor-test"], "\(Set(names))")
        // Without the preference the same work runs on the cooperative pool, never on that thread.
        #expect(Self.threadName() != "executor-test")
    }

    /// The kernel's name of the thread this runs on (a synchronous function, so it may ask).
    static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .newlines)
    }
}
