import ArrivalModel
import Testing

@testable import ArrivalIngest

@Suite("Lower-case hex")
struct LowercaseHexTests {
    @Test("Every byte as two lower-case digits, high nibble first")
    func everyByte() {
        #expect(LowercaseHex.string([]) == "")
        #expect(LowercaseHex.string([0x00, 0x0F, 0xF0, 0xAB, 0xFF, 0x10]) == "000ff0abff10")
        let all = LowercaseHex.string((0...255).map { UInt8($0) })
        #expect(all.count == 512)
        #expect(all.hasPrefix("000102030405060708090a0b0c0d0e0f10"))
        #expect(all.hasSuffix("f9fafbfcfdfeff"))
    }

    @Test(
        "A file's name in the store is the hex of its SHA-256 (FIPS 180-2's \"abc\" vector), also of a prefix on the way"
    )
    func sha256Vector() {
        var hasher = PrefixHasher(checkpoints: [3])
        let abc = Array("abc".utf8)
        abc.withUnsafeBytes { hasher.update($0) }
        abc.withUnsafeBytes { hasher.update($0) }
        let expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(hasher.prefixes[3] == expected)
        #expect(hasher.finalize() != expected)
        var once = PrefixHasher()
        abc.withUnsafeBytes { once.update($0) }
        #expect(once.finalize() == expected)
    }
}
