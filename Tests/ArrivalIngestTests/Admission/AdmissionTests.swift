import ArrivalStore
import Testing

@testable import ArrivalIngest

/// Admission as a pure policy: every verdict from a registry made up in the
/// test, without a file or a store.
@Suite("Admission")
struct AdmissionTests {
    /// A registry with the files a test says, counting the questions asked of it.
    final class Registry: StoredFiles {
        var files: [(sha256: String, byteCount: Int, path: String, refused: Bool)] = []
        var questions = 0

        func contains(byteCount: Int) -> Bool {
            questions += 1
            return files.contains { $0.byteCount == byteCount }
        }
        func contains(sha256: String) -> Bool {
            questions += 1
            return files.contains { $0.sha256 == sha256 }
        }
        func hasRefusedLines(sha256: String) -> Bool {
            questions += 1
            return files.contains { $0.sha256 == sha256 && $0.refused }
        }
        func earlierVersions(atPath path: String, smallerThan byteCount: Int) -> [StoredVersion] {
            questions += 1
            return files.enumerated()
                .filter { $0.element.path == path && $0.element.byteCount > 0 && $0.element.byteCount < byteCount }
                .sorted { $0.element.byteCount < $1.element.byteCount }
                .map {
                    StoredVersion(id: Int64($0.offset + 1), byteCount: $0.element.byteCount, sha256: $0.element.sha256)
                }
        }
    }

    static let chunk = 1 << 20

    static func file(_ name: String = "f.jsonl", sha256: String? = nil, sender: Bool = true) -> NamedFile {
        NamedFile(path: "/nowhere/\(name)", name: name, senderRecordsAllowed: sender, sha256: sha256)
    }

    @Test("A file of a size no stored file and no file of the run has is decoded at once, hashed on the way")
    func newSize() {
        let registry = Registry()
        registry.files = [("aa", 100, "old.jsonl", false)]
        let admission = Admission(stored: registry, hashEveryFile: false, chunkSize: Self.chunk)
        #expect(admission.firstStep(for: Self.file(), size: 101) == .decode(decideAfterFirstChunk: false))
        // A size that cannot be told: decoded, and it fails there with its reason.
        #expect(admission.firstStep(for: Self.file(), size: nil) == .decode(decideAfterFirstChunk: false))
    }

    @Test("A file of a stored file's size is hashed first; its verdict is stored, or new")
    func storedSize() {
        let registry = Registry()
        registry.files = [("aa", 100, "old.jsonl", false)]
        let admission = Admission(stored: registry, hashEveryFile: false, chunkSize: Self.chunk)
        #expect(admission.firstStep(for: Self.file(), size: 100) == .hashFirst)
        #expect(admission.verdict(sha256: "aa", senderRecordsAllowed: true) == .stored)
        #expect(admission.verdict(sha256: "bb", senderRecordsAllowed: true) == .new(upgrading: nil))
    }

    @Test("Without a registry (a store loaded alone) nothing is stored; a throwaway store hashes every file first")
    func noRegistry() {
        let alone = Admission(stored: nil, hashEveryFile: false, chunkSize: Self.chunk)
        #expect(alone.firstStep(for: Self.file(), size: 100) == .decode(decideAfterFirstChunk: false))
        #expect(alone.verdict(sha256: "aa", senderRecordsAllowed: true) == .new(upgrading: nil))
        #expect(alone.candidateVersions(named: "f.jsonl", size: 100).isEmpty)
        let throwaway = Admission(stored: nil, hashEveryFile: true, chunkSize: Self.chunk)
        #expect(throwaway.firstStep(for: Self.file(), size: 7) == .hashFirst)
        #expect(throwaway.firstStep(for: Self.file(), size: nil) == .hashFirst)
    }

    @Test("A hash the caller vouches for decides before the file is opened")
    func vouched() {
        let registry = Registry()
        registry.files = [("aa", 100, "a", false), ("rr", 50, "r", true)]
        let admission = Admission(stored: registry, hashEveryFile: false, chunkSize: Self.chunk)
        #expect(admission.firstStep(for: Self.file(sha256: "aa"), size: 100) == .decided(.stored, sha256: "aa"))
        #expect(
            admission.firstStep(for: Self.file(sha256: "cc"), size: 100)
                == .decided(.new(upgrading: nil), sha256: "cc"))
        // Stored with lines refused for a device token: the sender's copy takes its place,
        // another device copy is a duplicate.
        #expect(
            admission.firstStep(for: Self.file(sha256: "rr", sender: true), size: 50)
                == .decided(.new(upgrading: "rr"), sha256: "rr"))
        #expect(
            admission.firstStep(for: Self.file(sha256: "rr", sender: false), size: 50)
                == .decided(.stored, sha256: "rr"))
    }

    @Test("A copy met earlier in the run: decided from the first chunk when it holds the file, else hashed first")
    func copiesInRun() {
        let registry = Registry()
        var admission = Admission(stored: registry, hashEveryFile: false, chunkSize: Self.chunk)
        admission.remember(sha256: "s1", byteCount: 300, refusedLines: false)
        admission.remember(sha256: "s2", byteCount: Self.chunk + 5, refusedLines: false)
        #expect(admission.firstStep(for: Self.file(), size: 300) == .decode(decideAfterFirstChunk: true))
        #expect(admission.firstStep(for: Self.file(), size: Self.chunk + 5) == .hashFirst)
        #expect(admission.verdictAfterFirstChunk(sha256: "s1", senderRecordsAllowed: true) == .copyInRun)
        #expect(admission.verdictAfterFirstChunk(sha256: "other", senderRecordsAllowed: true) == .new(upgrading: nil))
        #expect(admission.verdict(sha256: "s2", senderRecordsAllowed: false) == .copyInRun)
        #expect(Admission.Verdict.copyInRun.isKnown && Admission.Verdict.stored.isKnown)
        #expect(!Admission.Verdict.new(upgrading: "x").isKnown)
    }

    @Test("The first chunk's verdict asks only the run: no stored file has the size")
    func firstChunkAsksNoStore() {
        let registry = Registry()
        registry.files = [("s1", 999, "a", false)]
        var admission = Admission(stored: registry, hashEveryFile: false, chunkSize: Self.chunk)
        admission.remember(sha256: "x", byteCount: 300, refusedLines: false)
        let asked = registry.questions
        #expect(admission.verdictAfterFirstChunk(sha256: "s1", senderRecordsAllowed: true) == .new(upgrading: nil))
        #expect(registry.questions == asked)
    }

    @Test("Bytes read in the run with lines refused are upgraded by a sender's copy, a duplicate of a device's")
    func refusedInRun() {
        var admission = Admission(stored: Registry(), hashEveryFile: false, chunkSize: Self.chunk)
        admission.remember(sha256: "r", byteCount: 10, refusedLines: true)
        #expect(admission.verdict(sha256: "r", senderRecordsAllowed: true) == .new(upgrading: "r"))
        #expect(admission.verdict(sha256: "r", senderRecordsAllowed: false) == .copyInRun)
        #expect(admission.verdictAfterFirstChunk(sha256: "r", senderRecordsAllowed: true) == .new(upgrading: "r"))
        #expect(admission.verdictAfterFirstChunk(sha256: "r", senderRecordsAllowed: false) == .copyInRun)
    }

    @Test("A grown file replaces exactly the stored versions at its name whose bytes it begins with")
    func grownVersions() {
        let registry = Registry()
        registry.files = [
            ("v1", 10, "log.jsonl", false), ("v2", 20, "log.jsonl", false), ("other", 15, "x.jsonl", false),
            ("v3", 40, "log.jsonl", false),
        ]
        let admission = Admission(stored: registry, hashEveryFile: false, chunkSize: Self.chunk)
        let candidates = admission.candidateVersions(named: "log.jsonl", size: 30)
        #expect(candidates.map(\.sha256) == ["v1", "v2"])
        // The file's first 10 bytes hash to v1's hash, its first 20 to something else: v2 was rewritten.
        let grown = Admission.grown(from: candidates, prefixes: [10: "v1", 20: "changed"])
        #expect(grown.map(\.sha256) == ["v1"])
        #expect(Admission.grown(from: candidates, prefixes: [:]).isEmpty)
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
