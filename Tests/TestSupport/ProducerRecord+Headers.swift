public import RdKafka

extension ProducerRecord {
    /// The record with one header's text replaced (what an attacker who alters a signed record does).
    public func replacingHeader(_ name: String, with text: String) -> ProducerRecord {
        var changed = self
        changed.headers = self.headers.map { $0.name == name ? KafkaHeader(name: name, text: text) : $0 }
        return changed
    }
}
