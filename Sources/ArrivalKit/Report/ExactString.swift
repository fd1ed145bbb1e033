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

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        let hashed: Void? = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil {
            for byte in text.utf8 { hasher.combine(byte) }
        }
        hasher.combine(0xFF as UInt8)  // never a UTF-8 byte: ends the key
    }

    /// Code point order, which is the order of the UTF-8 bytes.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
    }
}
