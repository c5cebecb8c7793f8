import Hummingbird
import Storage

/// The request context of customer-api: the core context and the API key the request authenticated with.
struct CustomerAPIContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// Set by ``APIKeyMiddleware`` on the `/v1` routes.
    var key: APIKey?

    init(source: Source) {
        self.coreContext = .init(source: source)
        self.key = nil
    }
}
