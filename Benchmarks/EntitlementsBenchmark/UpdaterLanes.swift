import EntitlementDecisions
import NotificationPipeline
import PipelineRecords
import Storage

/// Applies notifications as the entitlement-updater does: four lanes over disjoint subjects, each in order, 50
/// notifications a transaction (the soak and the scale benchmark share it).
enum UpdaterLanes {
    static func apply(_ records: [VerifiedNotificationRecord], repository: EntitlementRepository) async throws {
        let lanes = Dictionary(grouping: records, by: { abs($0.subject.hashValue) % 4 }).values
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in lanes {
                group.addTask {
                    for chunk in stride(from: 0, to: lane.count, by: 50) {
                        let inputs = lane[chunk..<min(chunk + 50, lane.count)].map {
                            EntitlementInput(.notification($0), receivedAt: nil)
                        }
                        _ = try await repository.apply(Array(inputs))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
