import ArgumentParser
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka

/// `iapctl topics`: creates every pipeline topic with a chosen partition count, the replication and
/// `min.insync.replicas` of `TopicPolicy` and each topic's retention. Topics that exist are left as they are, so it
/// is safe to run on every deployment.
struct TopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Create the pipeline's topics.",
        discussion: """
            Creates \(PipelineTopics().all.joined(separator: ", ")) with --partitions partitions each, \
            --replication-factor copies (min.insync.replicas one less, at most 2) and each topic's retention \
            (docs/operations.md says why); --topic NAME[:PARTITIONS] adds a topic or sets one topic's count. \
            Partitions cap how many replicas of a consumer can share a topic's load; they cannot be added later on \
            every broker, so choose generously. The brokers and their security come from the services' variables \
            (KAFKA_BOOTSTRAP_SERVERS, KAFKA_SECURITY_PROTOCOL, ...); --bootstrap-servers replaces the broker list.
            """)

    @Option(
        name: .customLong("bootstrap-servers"),
        help: "Comma-separated host:port list (default KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    @Option(help: "Partitions per topic.")
    var partitions: Int = 6

    @Option(help: "Copies of each partition (3 in production; 1 for a one-broker development cluster).")
    var replicationFactor: Int = TopicPolicy.replicationFactor

    @Option(name: .customLong("topic"), help: "A topic to create (NAME or NAME:PARTITIONS); repeatable.")
    var extraTopics: [String] = []

    @Option(
        name: .customLong("print-kafka-topics"),
        help: ArgumentHelp(
            "Print the plan as Strimzi KafkaTopic resources for this Kafka cluster name instead of creating topics.",
            valueName: "cluster"))
    var strimziCluster: String?

    @Option(
        name: .customLong("print-kafka-users"),
        help: ArgumentHelp(
            "Print the topic-access table as Strimzi KafkaUser resources for this Kafka cluster name (one user per "
                + "service, only its topics and groups) instead of creating topics.",
            valueName: "cluster"))
    var strimziUsersCluster: String?

    @Flag(
        name: .customLong("print-kafka-egress"),
        help: "Print the NetworkPolicy giving exactly the topic-access table's workloads egress to Kafka.")
    var printKafkaEgress = false

    /// The retention of a topic added with --topic.
    static let extraTopicPolicy = TopicPolicy(retentionDays: 7, reason: "added with --topic")

    mutating func run() async throws {
        if self.printKafkaEgress {
            StandardStreams.writeOutput(String(Self.kafkaEgressPolicy(PipelineTopics().access).dropLast()))
            return
        }
        if let cluster = self.strimziUsersCluster {
            StandardStreams.writeOutput(
                String(Self.kafkaUserResources(PipelineTopics().access, cluster: cluster).dropLast()))
            return
        }
        let plan = try self.plan()
        if let cluster = self.strimziCluster {
            StandardStreams.writeOutput(String(Self.kafkaTopicResources(plan, cluster: cluster).dropLast()))
            return
        }
        do {
            let admin = KafkaAdmin(
                settings: try KafkaAccess.client(self.bootstrapServers, clientID: "iapctl"),
                logger: APIAccess.quietLogger)
            let created = Set(try await admin.createTopics(plan))
            for topic in plan {
                let retention = topic.configuration["retention.ms"].flatMap(Int64.init).map {
                    $0 < 0 ? "kept for ever" : "kept \($0 / 86_400_000) days"
                }
                StandardStreams.writeOutput(
                    "\(created.contains(topic.name) ? "created" : "exists ") \(topic.name) (\(topic.partitions) "
                        + "partitions, \(topic.replicationFactor ?? 0) replicas, min.insync.replicas "
                        + "\(topic.configuration["min.insync.replicas"] ?? "?"), \(retention ?? "")"
                        + (created.contains(topic.name) ? ")" : "; left as it is)"))
            }
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// The topics with their partitions, replication and configuration.
    func plan() throws -> [KafkaTopicSpecification] {
        guard self.partitions > 0 else { throw ValidationError("--partitions must be positive") }
        guard self.replicationFactor > 0 else { throw ValidationError("--replication-factor must be positive") }
        let topics = PipelineTopics()
        let policies = topics.policies
        var plan: [(name: String, partitions: Int)] = topics.all.map { (name: $0, partitions: self.partitions) }
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
        return plan.map { topic in
            KafkaTopicSpecification(
                name: topic.name, partitions: topic.partitions, replicationFactor: self.replicationFactor,
                configuration: (policies[topic.name] ?? Self.extraTopicPolicy).configuration(
                    replicationFactor: self.replicationFactor))
        }
    }

    // MARK: - Strimzi

    /// The plan as Strimzi `KafkaTopic` resources (the committed deploy/kubernetes/components/strimzi/topics.yaml is
    /// this output, and a test keeps it so), each with its retention's reason.
    static func kafkaTopicResources(_ plan: [KafkaTopicSpecification], cluster: String) -> String {
        let policies = PipelineTopics().policies
        var text = """
            # Generated by `iapctl topics --partitions \(plan.first?.partitions ?? 0) --print-kafka-topics \(cluster)`:
            # the topics iapctl creates, as Strimzi KafkaTopic resources (TopicPolicy: replication, min.insync.replicas
            # and retention, with its reason).

            """
        for topic in plan {
            let reason = (policies[topic.name] ?? Self.extraTopicPolicy).reason
            text += """
                ---
                # \(topic.name): \(reason)
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaTopic
                metadata:
                  name: \(topic.name.replacingOccurrences(of: ".", with: "-"))
                  labels:
                    strimzi.io/cluster: \(cluster)
                spec:
                  topicName: \(topic.name)
                  partitions: \(topic.partitions)
                  replicas: \(topic.replicationFactor ?? TopicPolicy.replicationFactor)
                  config:

                """
            for (name, value) in topic.configuration.sorted(by: { $0.key < $1.key }) {
                text += "    \(name): \"\(value)\"\n"
            }
        }
        return text
    }
}
