import Foundation
import NIOCore
import NIOPosix

/// Swift's global executor replaced by NIO's singleton event loops, with every job run as the *generic* executor runs
/// it.
///
/// NIO's own take-over (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`)
/// runs each job as if it were isolated to its event loop (`runSynchronously(on: loop.asUnownedSerialExecutor())`).
/// Every nonisolated async function begins with a hop to the generic executor, and the runtime compares executors by
/// identity: from "isolated to the loop" to "generic" is a switch, so each such hop parked the task, queued it on
/// the loop again and ran it as a new job, and the next hop did the same. `perf` of ingest under load put 6.7 % of
/// its CPU inside `swift_task_switch`, plus the loop's dispatch of those jobs. Run as generic, a hop to the generic
/// executor is the runtime's fast path (it goes straight on); a job is queued only when a task really waits.
///
/// Jobs still go to the calling thread's loop when there is one (`any()` is sticky), otherwise to the next loop.
/// Work isolated to a loop (an actor whose executor is one) is unaffected: NIO enqueues it through the loop's own
/// executor, not through this hook.
enum EventLoopGlobalExecutor {
    /// The runtime's own enqueue, which the hook replaces.
    private typealias Enqueue = @convention(thin) (UnownedJob) -> Void

    /// The runtime's hook for the global executor (`swift_task_enqueueGlobal_hook`): the job, and the enqueue it
    /// replaces.
    private typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, Enqueue) -> Void

    /// Installs the hook. Call it first in `main`, before any task starts; returns false when the runtime has no such
    /// hook or another one is installed already (tasks then stay on Swift's pool).
    static func install() -> Bool {
        guard
            MemoryLayout<UnownedSerialExecutor>.size == MemoryLayout<GenericExecutorBits>.size,
            let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook")
        else { return false }
        let slot = symbol.assumingMemoryBound(to: UnsafeRawPointer?.self)
        guard slot.pointee == nil else { return false }
        let hook: EnqueueGlobalHook = { job, _ in
            MultiThreadedEventLoopGroup.singleton.any().execute {
                job.runSynchronously(on: EventLoopGlobalExecutor.generic)
            }
        }
        slot.pointee = unsafeBitCast(hook, to: UnsafeRawPointer.self)
        return true
    }

    // MARK: - The generic executor

    /// The runtime's generic executor (`SerialExecutorRef::generic()`): no identity, no implementation. Swift has no
    /// public value for it; its two words are what the default global executor passes to `swift_job_run`.
    private struct GenericExecutorBits {
        let identity: UInt = 0
        let implementation: UInt = 0
    }

    /// The generic executor as the value `runSynchronously(on:)` takes.
    private static let generic = unsafeBitCast(GenericExecutorBits(), to: UnownedSerialExecutor.self)
}
