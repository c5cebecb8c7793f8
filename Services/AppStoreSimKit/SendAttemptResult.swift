import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

/// Apple's `sendAttemptResult` for a post that got no HTTP answer, from the error the client saw: the same names
/// Apple uses in notification history, test-notification status and the performance test's failures. Telling them
/// apart (instead of one name for every error) says in a failed test what happened on the wire.
@_spi(Testing) public enum SendAttemptResult {
    /// The result `error` stands for: `TIMED_OUT`, `NO_RESPONSE` (nothing listened), `PREMATURE_CLOSE` (the
    /// connection closed before the answer was complete), `SOCKET_ISSUE` (another socket error),
    /// `CIRCULAR_REDIRECT`, or `OTHER`.
    @_spi(Testing) public static func of(_ error: any Error) -> String {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .getConnectionFromPoolTimeout,
                .tlsHandshakeTimeout:
                return "TIMED_OUT"
            case .remoteConnectionClosed, .uncleanShutdown:
                return "PREMATURE_CLOSE"
            case .redirectCycleDetected, .redirectLimitReached:
                return "CIRCULAR_REDIRECT"
            default:
                return "OTHER"
            }
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return "TIMED_OUT"
            case .ioOnClosedChannel, .eof, .outputClosed, .alreadyClosed: return "PREMATURE_CLOSE"
            default: return "SOCKET_ISSUE"
            }
        case let error as IOError:
            return error.errnoCode == ECONNREFUSED ? "NO_RESPONSE" : "SOCKET_ISSUE"
        case is NIOConnectionError:
            return "NO_RESPONSE"
        default:
            return "OTHER"
        }
    }
}
