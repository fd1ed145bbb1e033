import Foundation

extension Diagnostic {
    /// A Foundation file error (`Data(contentsOf:)`, `FileManager`, `write(to:)`)
    /// as a diagnostic that names the file; nil for any other error.
    static func foundationFileError(_ error: any Error) -> Diagnostic? {
        let error = error as NSError
        guard error.domain == NSCocoaErrorDomain || error.domain == NSPOSIXErrorDomain else { return nil }
        let path =
            (error.userInfo[NSFilePathErrorKey] as? String)
            ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
        let location = path.map { Diagnostic.Location(path: $0) }
        let posix =
            (error.userInfo[NSUnderlyingErrorKey] as? NSError).flatMap {
                $0.domain == NSPOSIXErrorDomain ? Int32($0.code) : nil
            } ?? (error.domain == NSPOSIXErrorDomain ? Int32(error.code) : nil)
        let hint: String
        switch (error.domain, error.code, posix) {
        case (_, _, ENOENT?), (NSCocoaErrorDomain, CocoaError.fileNoSuchFile.rawValue, _),
            (NSCocoaErrorDomain, CocoaError.fileReadNoSuchFile.rawValue, _):
            hint = "check the path: it, or the directory it should be in, does not exist."
        case (_, _, EACCES?), (_, _, EPERM?), (_, _, EROFS?),
            (NSCocoaErrorDomain, CocoaError.fileReadNoPermission.rawValue, _),
            (NSCocoaErrorDomain, CocoaError.fileWriteNoPermission.rawValue, _),
            (NSCocoaErrorDomain, CocoaError.fileWriteVolumeReadOnly.rawValue, _):
            hint = "check the permissions of the file and its directory."
        case (_, _, ENOSPC?), (NSCocoaErrorDomain, CocoaError.fileWriteOutOfSpace.rawValue, _):
            hint = "free some disk space and run the command again."
        case (_, _, EISDIR?):
            hint = "the path is a directory: name a file."
        default:
            hint = "check the path exists and is readable (or writable, for an output)."
        }
        return Diagnostic(.io, error.localizedDescription, hint: hint, location: location)
    }
}
