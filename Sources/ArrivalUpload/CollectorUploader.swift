public import ArrivalBeacons
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Sends files to an arrival collector (`arrival serve`, `POST /v1/uploads`)
/// with URLSession: the app's beacon batches with its device token, the
/// sender's closed batches with a sender token.
///
/// An upload counts as stored when the collector answers 202 (queued: it
/// made the bytes durable before answering) or 200 (it had these bytes
/// already). 5xx, 429 and transport failures are retried with exponential
/// backoff, waiting what a `Retry-After` asks when there is one; any other
/// answer (401, 403, 413, 400) is final, because sending the same bytes
/// again cannot change it.
public struct CollectorUploader: Sendable {
    public struct Configuration: Sendable {
        /// The collector's base URL, e.g. `https://collector.example.com`.
        public var baseURL: URL
        /// A device token in the app, a sender token in the push sender.
        public var token: String
        /// Tries per upload (the first included).
        public var maxAttempts: Int
        /// The first wait between tries; each next one doubles, up to `maxBackoff`.
        public var initialBackoff: TimeInterval
        public var maxBackoff: TimeInterval
        /// Per request.
        public var timeout: TimeInterval
        public var session: URLSession

        public init(
            baseURL: URL, token: String, maxAttempts: Int = 5, initialBackoff: TimeInterval = 1,
            maxBackoff: TimeInterval = 60, timeout: TimeInterval = 60, session: URLSession = .shared
        ) {
            self.baseURL = baseURL
            self.token = token
            self.maxAttempts = max(1, maxAttempts)
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.timeout = timeout
            self.session = session
        }
    }

    /// What the collector said of a stored upload.
    public struct Receipt: Sendable, Equatable {
        /// The SHA-256 (hex) of the bytes, which `GET /v1/uploads/{sha256}` takes.
        public var sha256: String
        /// `queued`, `duplicate` or `ingested`.
        public var state: String
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// A final answer: sending again cannot help (wrong token, too large…).
        case refused(status: Int, message: String)
        /// Every try failed with a retryable answer or no answer.
        case gaveUp(attempts: Int, last: String)

        public var description: String {
            switch self {
            case .refused(let status, let message): "the collector refused the upload (\(status)): \(message)"
            case .gaveUp(let attempts, let last): "no upload after \(attempts) tries; the last: \(last)"
            }
        }
    }

    public let configuration: Configuration

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// Uploads `data` under `name` (a relative path the collector registers
    /// it by: the same bytes under the same name are never counted twice).
    public func upload(_ data: Data, name: String) async throws(Failure) -> Receipt {
        var request = URLRequest(url: configuration.baseURL.appendingPathComponent("v1/uploads"))
        request.httpMethod = "POST"
        request.timeoutInterval = configuration.timeout
        request.setValue("Bearer \(configuration.token)", forHTTPHeaderField: "Authorization")
        request.setValue(name, forHTTPHeaderField: "X-Upload-Name")
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        var wait = configuration.initialBackoff
        var last = ""
        for attempt in 1...configuration.maxAttempts {
            var retryAfter: TimeInterval?
            do {
                let (body, response) = try await configuration.session.upload(for: request, from: data)
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                let answer = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
                if status == 200 || status == 202, let sha256 = answer["upload"] as? String,
                    let state = answer["state"] as? String
                {
                    return Receipt(sha256: sha256, state: state)
                }
                let message = answer["error"] as? String ?? String(decoding: body.prefix(200), as: UTF8.self)
                guard status >= 500 || status == 429 else { throw Failure.refused(status: status, message: message) }
                last = "\(status): \(message)"
                retryAfter = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After")
                    .flatMap(TimeInterval.init)
            } catch let failure as Failure {
                throw failure
            } catch {
                last = error.localizedDescription
            }
            guard attempt < configuration.maxAttempts else { break }
            let delay = min(configuration.maxBackoff, max(wait, retryAfter ?? 0))
            try? await Task.sleep(for: .seconds(delay))
            wait = min(configuration.maxBackoff, wait * 2)
        }
        throw .gaveUp(attempts: configuration.maxAttempts, last: last)
    }
}

extension BeaconCollector {
    /// What ``upload(with:)`` did.
    public struct UploadSummary: Sendable, Equatable {
        public var batches = 0
        public var filesDeleted = 0
        public var lines = 0
        public var receipts: [CollectorUploader.Receipt] = []
    }

    /// Uploads every closed file, batch by batch, to the collector, and
    /// deletes each batch's files once the collector stored it. A batch that
    /// fails stops the run and keeps its files (the next run sends the same
    /// bytes); what was stored before stays deleted.
    public func upload(with uploader: CollectorUploader) async throws(CollectorUploader.Failure) -> UploadSummary {
        var summary = UploadSummary()
        while let batch = makeBatch() {
            let receipt = try await uploader.upload(batch.gzip, name: "beacons/" + batch.suggestedFileName)
            summary.receipts.append(receipt)
            summary.batches += 1
            summary.lines += batch.lines
            let deleted = confirmUpload(of: batch)
            summary.filesDeleted += deleted
            // Files that grew since they were batched stay; do not send the same bytes in a loop.
            if deleted == 0 { break }
        }
        return summary
    }
}
