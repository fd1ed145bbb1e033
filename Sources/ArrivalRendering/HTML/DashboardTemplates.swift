import Mustache

/// The HTML report's Mustache templates. Their source is `Dashboards/templates/*.mustache`;
/// ``embedded`` (generated, in `DashboardTemplates+Embedded.swift`) holds a copy compiled
/// into the library, so the `arrival` binary renders the report from any working directory
/// and under `swift run` without looking for files. A test fails when the copy differs from
/// the files; `RECORD_TEMPLATES=1 swift test --filter DashboardTemplateTests` rewrites it.
package enum DashboardTemplates {
    /// The content type every template declares (`{{% CONTENT_TYPE: ARRIVAL_HTML}}`).
    package static let contentTypeName = "ARRIVAL_HTML"

    struct Missing: Error, CustomStringConvertible {
        var name: String
        var description: String { "the HTML report template '\(name)' is missing from the build" }
    }

    /// A template that swift-mustache cannot parse, with where.
    struct Invalid: Error, CustomStringConvertible {
        var name: String
        var line: Int?
        var column: Int?
        var reason: String
        var description: String {
            "the HTML report template '\(name)' cannot be parsed"
                + (line.map { " at line \($0)" + (column.map { ", column \($0)" } ?? "") } ?? "") + ": \(reason)"
        }
    }

    /// The templates, parsed, by name (file name without `.mustache`).
    static func library() throws -> MustacheLibrary {
        MustacheContentTypes.register(HTMLEscaping(), named: contentTypeName)
        var library = MustacheLibrary()
        for (name, text) in embedded {
            do {
                try library.register(text, named: name)
            } catch let error as MustacheTemplate.ParserError {
                throw Invalid(
                    name: name, line: error.context.lineNumber, column: error.context.columnNumber,
                    reason: "\(error.error)")
            } catch {
                throw Invalid(name: name, reason: "\(error)")
            }
        }
        return library
    }
}

/// Escapes text for HTML element content and quoted attribute values, code
/// point by code point. (swift-mustache's own HTML escaping looks at whole
/// `Character`s, so a quote followed by a combining mark — one Character —
/// would pass unescaped and could end an attribute.)
struct HTMLEscaping: MustacheContentType {
    func escapeText(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            case "`": out.append(contentsOf: "&#96;".unicodeScalars)
            case "=": out.append(contentsOf: "&#61;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
