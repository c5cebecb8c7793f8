import AppStoreModels
import Foundation

/// The identifier of a request that came without `x-request-id`: a random (version 4) UUID (``RandomUUID``, one
/// `getrandom` call; ingest pays it once per notification).
enum RequestIdentifier {
    /// A new random UUID string.
    static func random() -> String {
        UUID(uuid: RandomUUID.bytes()).uuidString
    }
}
