public import Foundation

/// A string compared and hashed by its Unicode code points, as the contract
/// compares values. Swift's `String` treats canonically equivalent strings as
/// equal ("é" precomposed and "e" + combining accent, "K" and the Kelvin
/// sign), which would merge keys that the data keeps apart.
public struct ExactString: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let text: String

    public init(_ text: String) {
        self.text = text
    }

    public init(stringLiteral value: String) {
        self.text = value
    }

    public var description: String { text }

    @inlinable @inline(__always)
    public static func == (lhs: Self, rhs: Self) -> Bool {
        // On the contiguous UTF-8 of native strings, compare as buffers: the
        // generic `elementsEqual` over two `UTF8View`s steps byte by byte, and
        // dictionary lookups of activity ids and topics call this millions of times.
        let fast = lhs.text.utf8.withContiguousStorageIfAvailable { a in
            rhs.text.utf8.withContiguousStorageIfAvailable { b in
                guard a.count == b.count else { return false }
                guard let x = a.baseAddress, let y = b.baseAddress else { return true }  // both empty
                return memcmp(x, y, a.count) == 0
            }
        }
        if let fast, let result = fast { return result }
        return lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    @inlinable @inline(__always)
    public func hash(into hasher: inout Hasher) {
        let hashed: Void? = text.utf8.withContiguousStorageIfAvailable {
            hasher.combine(bytes: UnsafeRawBufferPointer($0))
        }
        if hashed == nil {
            for byte in text.utf8 { hasher.combine(byte) }
        }
        hasher.combine(0xFF as UInt8)  // never a UTF-8 byte: ends the key
    }

    /// Code point order, which is the order of the UTF-8 bytes.
    @inlinable @inline(__always)
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
    }
}

/// Orders strings by Unicode code point (the order of their UTF-8 bytes),
/// not by Swift's canonical-equivalence order.
package func codePointOrder(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}
