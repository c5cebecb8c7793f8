import AsyncHTTPClient
import Foundation
import PipelineRecords
import TestSupport
import Testing

// MARK: - Which topics each service really used

extension ServiceFleet {
    /// The topics each service produced to and consumed in which groups, from every running
    /// instance's `kafka_records_produced_total` and `kafka_records_consumed_total`.
    public func observedTopicUse(http: HTTPClient) async throws -> [String: TopicAccess.ObservedUse] {
        var observed: [String: TopicAccess.ObservedUse] = [:]
        for name in self.names {
            let text = try await self.metrics(name, http: http)
            let use = Self.topicUse(fromMetrics: text)
            observed[Self.service(of: name), default: .init()].produced.formUnion(use.produced)
            observed[Self.service(of: name), default: .init()].consumed.formUnion(use.consumed)
        }
        return observed
    }

    /// What the services did that the topic-access table (the ACLs' source) does not allow, one sentence each,
    /// and the table's grants no service used in this run (for the test's report).
    public func topicAccessViolations(http: HTTPClient, table: [TopicAccess] = PipelineTopics().access) async throws
        -> (violations: [String], used: [String: TopicAccess.ObservedUse])
    {
        let observed = try await self.observedTopicUse(http: http)
        var violations: [String] = []
        for (service, use) in observed.sorted(by: { $0.key < $1.key }) {
            guard let access = table.first(where: { $0.principal == service }) else {
                if !use.produced.isEmpty || !use.consumed.isEmpty {
                    violations.append("\(service) used Kafka and has no row in the topic-access table")
                }
                continue
            }
            violations += access.violations(of: use)
        }
        return (violations, observed)
    }

    /// Expects every service's Kafka use within the topic-access table, and prints what each used (which grants
    /// a run exercises differs by scenario; the union over the end-to-end runs covers the table).
    public func expectTopicAccessAsTheTableSays(http: HTTPClient, run: String) async throws {
        let (violations, used) = try await self.topicAccessViolations(http: http)
        #expect(violations.isEmpty, "Kafka use beyond the topic-access table: \(violations)")
        let summary = used.sorted { $0.key < $1.key }.map { service, use in
            let consumed = use.consumed.sorted().map { "\($0.topic) (\($0.group))" }
            return "\(service): wrote \(use.produced.sorted()), read \(consumed)"
        }
        print("topic access, \(run): \(violations.count) outside the table; " + summary.joined(separator: "; "))
    }

    /// The produced topics and the topics consumed per group with a count above zero in a `/metrics` text.
    public static func topicUse(fromMetrics text: String) -> TopicAccess.ObservedUse {
        var use = TopicAccess.ObservedUse()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let open = line.firstIndex(of: "{"), let close = line.firstIndex(of: "}"),
                let count = Double(line[line.index(after: close)...].trimmingCharacters(in: .whitespaces)), count > 0
            else { continue }
            let labels = Self.labels(String(line[line.index(after: open)..<close]))
            switch line[..<open] {
            case "kafka_records_produced_total": use.produced.insert(labels["topic"] ?? "")
            case "kafka_records_consumed_total":
                use.consumed.insert(TopicAccess.Consumption(labels["topic"] ?? "", group: labels["group"] ?? ""))
            default: continue
            }
        }
        return use
    }

    /// `a="x",b="y"` as a dictionary (label values here hold no quotes or commas).
    private static func labels(_ text: String) -> [String: String] {
        var labels: [String: String] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            labels[parts[0]] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return labels
    }
}
