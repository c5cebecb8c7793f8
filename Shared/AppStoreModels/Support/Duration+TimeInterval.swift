public import Foundation

extension Duration {
    /// The duration in seconds, for `Date` arithmetic.
    public var timeInterval: TimeInterval {
        Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18
    }
}
