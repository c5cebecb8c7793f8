import ArgumentParser
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka

/// `iapctl topics`: creates every pipeline topic with a chosen partition count. Topics that exist are
/// left as they are, so it is safe to run on every deployment.
struct TopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Create the pipeline's topics.",
        discussion: """
            Creates \(PipelineTopics().all.joined(separator: ", ")) with --partitions partitions each; \
            --topic NAME[:PARTITIONS] adds a topic or sets one topic's count. Partitions cap how many replicas of a \
            consumer can share a topic's load; they cannot be added later on every broker, so choose generously.
            """)

    @Option(name: .customLong("bootstrap-servers"), help: "Comma-separated host:port list.")
    var bootstrapServers: String

    @Option(help: "Partitions per topic.")
    var partitions: Int = 6

    @Option(name: .customLong("topic"), help: "A topic to create (NAME or NAME:PARTITIONS); repeatable.")
    var extraTopics: [String] = []

    mutating func run() async throws {
        let plan = try self.plan()
        let admin = KafkaAdmin(
            settings: KafkaClientSettings(
                bootstrapServers: self.bootstrapServers.split(separator: ",").map(String.init),
                clientID: "iapctl"),
            logger: Logger(label: "iapctl"))
        do {
            let created = Set(try await admin.createTopics(plan))
            for (name, partitions) in plan {
                StandardStreams.writeOutput(
                    "\(created.contains(name) ? "created" : "exists ") \(name) (\(partitions) partitions requested)")
            }
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// The topics and their partition counts.
    func plan() throws -> [(name: String, partitions: Int)] {
        guard self.partitions > 0 else { throw ValidationError("--partitions must be positive") }
        var plan = PipelineTopics().all.map { (name: $0, partitions: self.partitions) }
        for entry in self.extraTopics {
            let parts = entry.split(separator: ":").map(String.init)
            guard let name = parts.first, parts.count <= 2,
                let count = parts.count == 2 ? Int(parts[1]) : self.partitions, count > 0
            else {
                throw ValidationError("--topic takes NAME or NAME:PARTITIONS, not \(entry)")
            }
            plan.removeAll { $0.name == name }
            plan.append((name, count))
        }
        return plan
    }
}
