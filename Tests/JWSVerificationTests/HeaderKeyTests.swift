import Foundation
import Testing

@testable import JWSVerification

/// The chain cache's key: hashed on its ends, compared on every byte.
@Suite struct HeaderKeyTests {
    /// A header-sized run of base64url text, with one byte changed at `position` if given.
    static func header(changing position: Int? = nil, count: Int = 4_000) -> [UInt8] {
        var bytes = (0..<count).map {
            Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)[$0 % 64]
        }
        if let position {
            bytes[position] = bytes[position] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        }
        return bytes
    }

    @Test func headersDifferingOnlyOutsideTheHashedBytesAreDifferentKeys() {
        let middle = HeaderKeyTests.header().count / 2
        let one = HeaderKey(storing: Self.header()[...])
        let other = HeaderKey(storing: Self.header(changing: middle)[...])
        #expect(one.hashValue == other.hashValue, "the middle is not hashed")
        #expect(one != other, "but it is compared")
        var cache: [HeaderKey: Int] = [one: 1, other: 2]
        #expect(cache[HeaderKey(lookingUp: Self.header()[...])] == 1)
        #expect(cache[HeaderKey(lookingUp: Self.header(changing: middle)[...])] == 2)
        cache[one] = nil
        #expect(cache[HeaderKey(lookingUp: Self.header(changing: middle)[...])] == 2)
    }

    @Test func theEndsAndTheLengthAreHashed() {
        let base = HeaderKey(storing: Self.header()[...])
        #expect(HeaderKey(storing: Self.header(changing: 100)[...]).hashValue != base.hashValue)
        #expect(HeaderKey(storing: Self.header(changing: 3_990)[...]).hashValue != base.hashValue)
        #expect(HeaderKey(storing: Self.header(count: 3_999)[...]).hashValue != base.hashValue)
        // Short headers are hashed whole.
        #expect(
            HeaderKey(storing: Self.header(changing: 300, count: 500)[...]).hashValue
                != HeaderKey(storing: Self.header(count: 500)[...]).hashValue)
    }

    @Test func aLookupKeyOnASliceEqualsTheStoredCopy() {
        let jws = Array("xx".utf8) + Self.header() + Array(".payload".utf8)
        let slice = jws[2..<(2 + 4_000)]
        #expect(HeaderKey(lookingUp: slice) == HeaderKey(storing: Self.header()[...]))
        #expect(HeaderKey(lookingUp: slice).hashValue == HeaderKey(storing: Self.header()[...]).hashValue)
        #expect(HeaderKey(storing: slice).bytes.startIndex == 0, "a stored key owns its bytes")
    }
}
