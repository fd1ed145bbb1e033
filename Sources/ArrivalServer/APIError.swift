import ArrivalModel
import Foundation
import Hummingbird
import Logging

/// An error answer: its status, and a JSON body whose `error` says what
/// happened and what to do (`{"error": "…", "status": 413}`).
struct APIError: Error, HTTPResponseError, Sendable {
    var status: HTTPResponse.Status
    var message: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: jsonBody)))
    }

    var jsonBody: String {
        JSONBody.object([("error", .string(message)), ("status", .int(Int(status.code)))]) + "\n"
    }

    static func unauthorized(_ message: String) -> APIError {
        APIError(.unauthorized, message, headers: [.wwwAuthenticate: "Bearer realm=\"arrival\""])
    }
}

/// Turns every error that reaches the top (an unknown path, a handler's
/// unexpected failure) into an ``APIError``, so no answer has an empty or
/// HTML body.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            let message =
                error.status == .notFound
                ? "no such endpoint: \(request.method) \(request.uri.path) (see Documentation/Collector.md)"
                : (error.body ?? error.status.reasonPhrase)
            throw APIError(error.status, message, headers: error.headers)
        } catch {
            context.logger.error("request failed: \(String(describing: error))")
            throw APIError(.internalServerError, "the collector failed to answer; see its log")
        }
    }
}

/// A tiny JSON writer for the collector's small answers: keys in the order given.
enum JSONBody {
    indirect enum Value {
        case string(String)
        case int(Int)
        case object([(String, Value)])
        case array([Value])
    }

    static func object(_ fields: [(String, Value)]) -> String { write(.object(fields)) }

    static func write(_ value: Value) -> String {
        switch value {
        case .int(let number): return String(number)
        case .string(let text): return quoted(text)
        case .object(let fields):
            return "{" + fields.map { quoted($0.0) + ":" + write($0.1) }.joined(separator: ",") + "}"
        case .array(let values):
            return "[" + values.map(write).joined(separator: ",") + "]"
        }
    }

    private static func quoted(_ text: String) -> String { jsonStringLiteral(text) }
}
