import ArrivalModel
import Testing

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
}
