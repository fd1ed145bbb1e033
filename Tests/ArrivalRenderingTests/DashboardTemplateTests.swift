import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalRendering

/// The binary renders the report from templates compiled into it; their
/// source is `Dashboards/templates`. Re-generate the embedded copy on purpose
/// with `RECORD_TEMPLATES=1 swift test --filter DashboardTemplateTests`.
@Suite("Dashboard templates")
struct DashboardTemplateTests {
    static let templateDirectory = packageRoot.appendingPathComponent("Dashboards/templates")
    static let embeddedFile = packageRoot.appendingPathComponent(
        "Sources/ArrivalRendering/HTML/DashboardTemplates+Embedded.swift")

    static func templateFiles() throws -> [(name: String, text: String)] {
        let names = try FileManager.default.contentsOfDirectory(atPath: templateDirectory.path)
            .filter { $0.hasSuffix(".mustache") }.sorted()
        return try names.map { name in
            (
                String(name.dropLast(".mustache".count)),
                try String(contentsOf: templateDirectory.appendingPathComponent(name), encoding: .utf8)
            )
        }
    }

    /// The Swift source that embeds `templates`.
    static func embeddedSource(_ templates: [(name: String, text: String)]) -> String {
        var out = """
            // swift-format-ignore-file
            // Generated from Dashboards/templates/*.mustache by
            // `RECORD_TEMPLATES=1 swift test --filter DashboardTemplateTests`. Do not edit: edit the templates.

            extension DashboardTemplates {
                /// (name, text) of every template, by name.
                static let embedded: [(name: String, text: String)] = [

            """
        for (name, text) in templates {
            out += "        (\"\(name)\", #####\"\"\"\n" + text + "\n\"\"\"#####),\n"
        }
        return out + "    ]\n}\n"
    }

    @Test("The templates compiled into the library are the files in Dashboards/templates")
    func embeddedCopyMatchesFiles() throws {
        let files = try Self.templateFiles()
        #expect(files.count >= 3)
        if ProcessInfo.processInfo.environment["RECORD_TEMPLATES"] == "1" {
            try Data(Self.embeddedSource(files).utf8).write(to: Self.embeddedFile)
        }
        let embedded = DashboardTemplates.embedded
        #expect(
            embedded.map(\.name) == files.map(\.name),
            "run RECORD_TEMPLATES=1 swift test --filter DashboardTemplateTests")
        for (file, copy) in zip(files, embedded) {
            #expect(
                Array(file.text.utf8) == Array(copy.text.utf8),
                "\(file.name).mustache differs from its embedded copy; run RECORD_TEMPLATES=1 swift test --filter DashboardTemplateTests"
            )
        }
        // The generated file is what the generator writes (nobody edited it by hand).
        let source = try String(contentsOf: Self.embeddedFile, encoding: .utf8)
        #expect(source == Self.embeddedSource(files))
    }

    @Test("Every template escapes values code point by code point")
    func everyTemplateDeclaresTheEscaping() throws {
        // A partial falls back to swift-mustache's default HTML escaping unless
        // it declares the content type itself.
        for (name, text) in try Self.templateFiles() {
            #expect(text.hasPrefix("{{% CONTENT_TYPE: \(DashboardTemplates.contentTypeName)}}\n"), "\(name).mustache")
            #expect(!text.contains("{{{") && !text.contains("{{&"), "\(name).mustache must not print unescaped values")
        }
    }

    @Test("The escaping leaves no markup character, even joined with a combining mark")
    func escaping() {
        let escaped = HTMLEscaping().escapeText("<script>\"\u{301} onmouseover='x' a=b & `c`")
        #expect(escaped == "&lt;script&gt;&quot;\u{301} onmouseover&#61;&#39;x&#39; a&#61;b &amp; &#96;c&#96;")
    }
}
