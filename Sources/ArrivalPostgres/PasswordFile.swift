import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Password files: libpq's `.pgpass` (`host:port:database:user:password`
/// per line, `*` for any, `\:` and `\\` escaped, `#` comments; ignored
/// when group or others may read it, as libpq ignores it) and a file that
/// holds the password alone. A problem names the file, never its content.
package enum PasswordFile {
    package struct Problem: Error, CustomStringConvertible {
        package var description: String
    }

    /// A parsed `.pgpass` file.
    package struct PgPass: Sendable, Equatable {
        package struct Entry: Sendable, Equatable {
            var host: String
            var port: String
            var database: String
            var user: String
            var password: String
        }

        package var entries: [Entry]

        /// Parses the text of a `.pgpass` file; lines with fewer than five fields are skipped, as libpq does.
        package init(text: String) {
            entries = text.split(whereSeparator: \.isNewline).compactMap { line in
                guard !line.hasPrefix("#") else { return nil }
                var fields: [String] = []
                var field = ""
                var escaped = false
                for character in line {
                    if escaped {
                        field.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == ":", fields.count < 4 {
                        fields.append(field)
                        field = ""
                    } else {
                        field.append(character)
                    }
                }
                fields.append(field)
                guard fields.count == 5 else { return nil }
                return Entry(
                    host: fields[0], port: fields[1], database: fields[2], user: fields[3], password: fields[4])
            }
        }

        /// The password of the first line that matches (`*` matches anything).
        package func password(host: String, port: Int, database: String, user: String) -> String? {
            func matches(_ pattern: String, _ value: String) -> Bool { pattern == "*" || pattern == value }
            return entries.first {
                matches($0.host, host) && matches($0.port, String(port)) && matches($0.database, database)
                    && matches($0.user, user)
            }?.password
        }
    }

    /// The `.pgpass` file at `path`: nil when there is none, or when group or
    /// others may read it (libpq ignores such a file; arrival says so on stderr).
    package static func pgpass(at path: String) throws(Problem) -> PgPass? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Problem(description: "the password file \(path) is not a regular file")
        }
        if info.st_mode & (S_IRWXG | S_IRWXO) != 0 {
            FileHandle.standardError.write(
                Data(
                    "warning: password file \(path) is readable by group or others and is ignored; chmod 600 it\n"
                        .utf8))
            return nil
        }
        return PgPass(text: try read(path))
    }

    /// The password held alone by the file at `path` (one trailing newline
    /// dropped): a container's secret file.
    package static func secret(at path: String) throws(Problem) -> String {
        var text = try read(path)
        if text.hasSuffix("\r\n") {
            text.removeLast(2)
        } else if text.hasSuffix("\n") {
            text.removeLast()
        }
        guard !text.isEmpty else { throw Problem(description: "the password file \(path) is empty") }
        return text
    }

    private static func read(_ path: String) throws(Problem) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "the password file \(path) cannot be read")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Problem(description: "the password file \(path) is not UTF-8 text")
        }
        return text
    }
}
