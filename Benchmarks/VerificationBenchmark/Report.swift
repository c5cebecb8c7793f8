import Foundation

/// Prints benchmark figures as an aligned table.
enum Report {
    /// Prints one row per figure: what was measured, operations per second, and its comparison.
    static func print(_ rows: [(String, Double, String)]) {
        let width = rows.map(\.0.count).max() ?? 0
        Swift.print(
            "\("measurement".padding(toLength: width, withPad: " ", startingAt: 0))  \("per second".leftPadded(12))  compared with"
        )
        for (name, rate, comparison) in rows {
            Swift.print(
                "\(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(String(format: "%.0f", rate).leftPadded(12))  \(comparison)"
            )
        }
    }

    /// `x.xx of the crypto limit`.
    static func ratio(_ value: Double, _ limit: Double) -> String {
        String(format: "%.2f of the crypto limit", value / limit)
    }
}

extension String {
    /// The string right-aligned in `width` columns.
    func leftPadded(_ width: Int) -> String {
        String(repeating: " ", count: max(0, width - self.count)) + self
    }
}
