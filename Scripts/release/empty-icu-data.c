/*
 * An empty ICU common-data package, linked into the release binary in place of the ICU data that
 * swift-corelibs-foundation carries (Scripts/build-release.sh, issue 51).
 *
 * Foundation links ICU for its locale-dependent APIs (calendars, date and number formatters,
 * collation), and ICU's data for every locale is one 34 MB symbol, `icudt<version>_dat`, in the
 * toolchain's lib_FoundationICU.a: 39 % of the stripped binary. arrival calls none of those APIs: it
 * formats and parses its times (RFC3339, BeaconTime) and numbers itself, so that its output does not
 * depend on a locale. build-release.sh links this package under that symbol's name
 * (`--defsym icudt<version>_dat=arrival_empty_icu_data`), so the linker never takes the toolchain's
 * data; an ICU lookup then finds no data and fails with an error code, as ICU does when its data file
 * is missing. The release binary passes the same output checks as the debug build (.ci/run).
 *
 * The layout is ICU's common data header (ucmndata.h): a MappedData header, a UDataInfo naming the
 * "CmnD" format, version 1, then a table of contents of zero entries.
 */
#include <stdint.h>

struct EmptyPackage {
    uint16_t headerSize;
    uint8_t magic1, magic2;
    uint16_t size, reservedWord;
    uint8_t isBigEndian, charsetFamily, sizeofUChar, reservedByte;
    uint8_t dataFormat[4], formatVersion[4], dataVersion[4];
    uint8_t padding[4];
    uint32_t count;
    uint32_t reserved[3];
};

__attribute__((aligned(16), used)) const struct EmptyPackage arrival_empty_icu_data = {
    32, 0xda, 0x27, 20, 0, 0, 0, 2, 0, {'C', 'm', 'n', 'D'}, {1, 0, 0, 0}, {0, 0, 0, 0}, {0}, 0, {0},
};
