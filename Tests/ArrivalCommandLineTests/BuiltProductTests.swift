import ArrivalTestSupport
import Foundation
import Testing

/// The tests run the built `arrival`; they must find it wherever the
/// checkout is and whatever it is called.
@Suite("Finding the built tool")
struct BuiltProductTests {
    @Test("In a checkout named arrival, the lookup finds the built file, never the checkout folder")
    func checkoutNamedLikeTheProduct() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        // <root>/arrival/.build/x86_64-unknown-linux-gnu/debug/{arrival, arrivalPackageTests.xctest}
        let checkout = root.appendingPathComponent("arrival")
        let debug = checkout.appendingPathComponent(".build/x86_64-unknown-linux-gnu/debug")
        try FileManager.default.createDirectory(at: debug, withIntermediateDirectories: true)
        let tests = debug.appendingPathComponent("arrivalPackageTests.xctest")
        _ = FileManager.default.createFile(atPath: tests.path, contents: Data("#!/bin/sh\n".utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tests.path)

        // Before the product is built, the walk up from the bundle meets <root>/arrival, a directory.
        #expect(findExecutable(named: "arrival", near: [debug, checkout.appendingPathComponent(".build")]) == nil)

        let product = debug.appendingPathComponent("arrival")
        _ = FileManager.default.createFile(atPath: product.path, contents: Data("#!/bin/sh\n".utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: product.path)
        #expect(findExecutable(named: "arrival", near: [debug]) == nil, "a file that is not executable")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: product.path)
        // From the bundle's folder, and from a folder that only lies above the checkout too.
        #expect(findExecutable(named: "arrival", near: [debug])?.path == product.standardizedFileURL.path)
        #expect(
            findExecutable(named: "arrival", near: [checkout.appendingPathComponent(".build"), debug])?.path
                == product.standardizedFileURL.path)
    }

    @Test("The built arrival this run uses is a regular executable file")
    func thisRun() throws {
        let url = try builtProduct("arrival")
        var info = stat()
        #expect(stat(url.path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
        let version = try run("arrival", ["--version"])
        #expect(version.status == 0 && !version.stdout.isEmpty, "\(version)")
    }
}
