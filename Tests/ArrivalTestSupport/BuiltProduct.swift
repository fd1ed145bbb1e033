package import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The one way tests run a program: the package's built executables (`arrival`,
// `beacon-stress`) and the few system tools a test checks output with (gzip,
// promtool, setpriv, /bin/sh). Threads, not Swift concurrency: each child has
// a thread of its own that writes its stdin and reads its stdout and stderr
// together (a child that fills one pipe while the test waits on the other
// cannot hang it), and an `async` test's wait happens on a thread of its own
// too, never on the cooperative pool, which has as many threads as the
// machine has cores and which a blocking wait would starve.

// MARK: - Finding the built products

/// Where SwiftPM put the built executables (next to the test bundle).
package func builtProduct(_ name: String) throws -> URL {
    var candidates: [URL] = [Bundle.main.bundleURL.deletingLastPathComponent()]
    if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    guard let found = findExecutable(named: name, near: candidates) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
    }
    return found
}

/// The first regular, executable file called `name` in each of
/// `directories` or up to three folders above it, nearest first. Never a
/// directory: a checkout is often called like the product it builds
/// (`git clone …/arrival.git` makes `arrival/`), and a directory's search
/// permission reads as "executable".
package func findExecutable(named name: String, near directories: [URL]) -> URL? {
    for directory in directories {
        var url = directory.standardizedFileURL
        for _ in 0..<4 {
            let candidate = url.appendingPathComponent(name)
            var info = stat()
            if stat(candidate.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                access(candidate.path, X_OK) == 0
            {
                return candidate
            }
            url = url.deletingLastPathComponent()
        }
    }
    return nil
}

// MARK: - Running them

/// What a test runs: one of the package's built executables (a string
/// literal names one), or a program at an absolute path.
package enum Executable: Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    case product(String)
    case path(String)

    package init(stringLiteral name: String) { self = .product(name) }

    package var description: String {
        switch self {
        case .product(let name): name
        case .path(let path): path
        }
    }

    func url() throws -> URL {
        switch self {
        case .product(let name): try builtProduct(name)
        case .path(let path): URL(fileURLWithPath: path)
        }
    }
}

/// How long a child may run before the runner kills it and throws: far more
/// than any test's child takes, so only a hang reaches it.
package let defaultProcessTimeout: Duration = .seconds(180)

/// What a child did, from its start to its end.
package struct ProcessOutcome: Sendable, CustomStringConvertible {
    /// The program and its arguments, for messages.
    package var command: String
    /// The exit status, or 128 + the signal that ended it (as a shell says).
    package var status: Int32
    /// The signal that ended it; nil when it exited.
    package var signal: Int32?
    package var standardOutput: Data
    package var standardError: Data

    package var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
    package var stderr: String { String(decoding: standardError, as: UTF8.self) }

    package var description: String {
        let end = signal.map { "killed by signal \($0)" } ?? "exit \(status)"
        return "\(command): \(end)\nstdout: \(stdout.prefix(1000))\nstderr: \(stderr.prefix(1000))"
    }
}

/// A child that did not end in time (it and its process group were killed),
/// or one that cannot run as asked.
package struct ProcessRunError: Error, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}

/// Runs `executable` to its end and returns what it did. `stdin` is written
/// to it (without it, stdin is /dev/null); `environment` is added to this
/// process's; `directory` is its working directory. A child still running
/// after `timeout` is killed, with everything it started, and the run throws.
@discardableResult
package func run(
    _ executable: Executable, _ arguments: [String] = [], stdin: Data? = nil, environment: [String: String] = [:],
    in directory: URL? = nil, timeout: Duration = defaultProcessTimeout
) throws -> ProcessOutcome {
    try ChildProcess(executable, arguments, stdin: stdin, environment: environment, in: directory)
        .wait(timeout: timeout)
}

/// `run` for an `async` test: the wait happens on a thread of its own, not
/// on the cooperative pool.
@discardableResult
package func run(
    _ executable: Executable, _ arguments: [String] = [], stdin: Data? = nil, environment: [String: String] = [:],
    in directory: URL? = nil, timeout: Duration = defaultProcessTimeout
) async throws -> ProcessOutcome {
    try await ChildProcess(executable, arguments, stdin: stdin, environment: environment, in: directory)
        .wait(timeout: timeout)
}

/// A started child (a collector, a writer the test kills mid-way): signal
/// it, wait for it, look at its output so far. A handle let go of while its
/// child still runs kills the child's process group.
package final class ChildProcess: @unchecked Sendable {
    package let pid: pid_t
    package let command: String
    private let process: Process
    private let state = ChildState()

    /// Starts `executable` with `arguments`; the rest as for ``run(_:_:stdin:environment:in:timeout:)``.
    package init(
        _ executable: Executable, _ arguments: [String] = [], stdin: Data? = nil,
        environment: [String: String] = [:], in directory: URL? = nil
    ) throws {
        command = ([executable.description] + arguments).map { $0.contains(" ") ? "'\($0)'" : $0 }
            .joined(separator: " ")
        process = Process()
        process.executableURL = try executable.url()
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let directory { process.currentDirectoryURL = directory }
        let state = state
        process.terminationHandler = { state.terminated($0.terminationReason, $0.terminationStatus) }
        let launch = Launch(process: process, stdin: stdin, state: state)
        Thread { launch.run() }.start()
        pid = try launch.started()
    }

    deinit {
        if state.isRunning { killGroup(pid) }
        state.stopReading()
    }

    /// Whether the child has not ended yet.
    package var isRunning: Bool { state.isRunning }

    /// What the child wrote to stdout so far.
    package var stdout: String { String(decoding: state.output(error: false), as: UTF8.self) }

    /// What the child wrote to stderr so far.
    package var stderr: String { String(decoding: state.output(error: true), as: UTF8.self) }

    /// Sends `signal` to the child (not to what it started), unless it has ended.
    package func send(_ signal: Int32) {
        if state.isRunning { _ = kill(pid, signal) }
    }

    /// Waits for the child to end and for its stdout and stderr to close.
    /// After `timeout` it kills the child's process group and throws.
    @discardableResult
    package func wait(timeout: Duration = defaultProcessTimeout) throws -> ProcessOutcome {
        if state.waitUntilFinished(before: Date(timeIntervalSinceNow: timeout.seconds)) { return outcome() }
        throw hung("did not end within \(timeout)")
    }

    /// `wait` for an `async` test, on a thread of its own.
    @discardableResult
    package func wait(timeout: Duration = defaultProcessTimeout) async throws -> ProcessOutcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try self.wait(timeout: timeout) }) }.start()
        }
    }

    /// Sends `signal`, then waits as ``wait(timeout:)`` does.
    @discardableResult
    package func stop(_ signal: Int32, timeout: Duration = defaultProcessTimeout) throws -> ProcessOutcome {
        send(signal)
        return try wait(timeout: timeout)
    }

    /// `stop` for an `async` test, on a thread of its own.
    @discardableResult
    package func stop(_ signal: Int32, timeout: Duration = defaultProcessTimeout) async throws -> ProcessOutcome {
        send(signal)
        return try await wait(timeout: timeout)
    }

    /// Waits until the child's stdout holds `text` or is closed (the child ended), and
    /// returns its stdout so far. After `timeout` it kills the child's process
    /// group and throws.
    @discardableResult
    package func waitForOutput(containing text: String, timeout: Duration = defaultProcessTimeout) throws -> String {
        let wanted = Data(text.utf8)
        if state.waitUntilOutput(contains: wanted, before: Date(timeIntervalSinceNow: timeout.seconds)) {
            return stdout
        }
        throw hung("did not write \(text.debugDescription) within \(timeout)")
    }

    private func outcome() -> ProcessOutcome {
        let (reason, status) = state.termination ?? (.exit, -1)
        let signal = reason == .uncaughtSignal ? status : nil
        return ProcessOutcome(
            command: command, status: signal.map { 128 + $0 } ?? status, signal: signal,
            standardOutput: state.output(error: false), standardError: state.output(error: true))
    }

    /// Kills a child that hangs, and everything it started, and says what it wrote.
    private func hung(_ what: String) -> ProcessRunError {
        killGroup(pid)
        _ = state.waitUntilFinished(before: Date(timeIntervalSinceNow: 10))
        state.stopReading()
        return ProcessRunError(
            "\(command) \(what); the runner killed it (SIGKILL to its process group)\n"
                + "stdout: \(stdout.prefix(1000))\nstderr: \(stderr.prefix(1000))")
    }
}

/// SIGKILL to the process group of a child, which Foundation on Linux made
/// its own: the child and whatever it started. Where there is no such group
/// (Apple's Foundation leaves the child in the tests' group), to the child.
private func killGroup(_ pid: pid_t) {
    if kill(-pid, SIGKILL) != 0 { _ = kill(pid, SIGKILL) }
}

extension Duration {
    fileprivate var seconds: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}

/// A close-on-exec copy of `handle`'s descriptor; `handle` is closed.
private func ownedCopy(of handle: FileHandle) -> Int32 {
    let descriptor = fcntl(handle.fileDescriptor, F_DUPFD_CLOEXEC, 0)
    try? handle.close()
    return descriptor
}

/// What the child did so far, shared by the test's thread, the pump's and Foundation's.
private final class ChildState: @unchecked Sendable {
    private let condition = NSCondition()
    private var stdout = Data()
    private var stderr = Data()
    private var ended: (Process.TerminationReason, Int32)?
    private var outputClosed = false
    private var stopRequested = false

    var isRunning: Bool { locked { ended == nil } }
    var termination: (Process.TerminationReason, Int32)? { locked { ended } }
    var shouldStop: Bool { locked { stopRequested } }

    func output(error: Bool) -> Data { locked { error ? stderr : stdout } }

    func append(_ bytes: UnsafeRawBufferPointer, error: Bool) {
        locked {
            if error { stderr.append(contentsOf: bytes) } else { stdout.append(contentsOf: bytes) }
            condition.broadcast()
        }
    }

    func terminated(_ reason: Process.TerminationReason, _ status: Int32) {
        locked {
            ended = (reason, status)
            condition.broadcast()
        }
    }

    func outputDidClose() {
        locked {
            outputClosed = true
            condition.broadcast()
        }
    }

    /// Lets the pump stop reading: the child is gone, but something it started may hold its pipes;
    /// or the handle is gone.
    func stopReading() {
        locked {
            stopRequested = true
            condition.broadcast()
        }
    }

    /// Waits until the child has ended (or nobody waits for it any more).
    func waitUntilTerminated() {
        locked {
            while ended == nil && !stopRequested { condition.wait() }
        }
    }

    /// Whether the child ended and closed its output before `deadline`.
    func waitUntilFinished(before deadline: Date) -> Bool {
        locked {
            while ended == nil || !outputClosed {
                if !condition.wait(until: deadline) { return ended != nil && outputClosed }
            }
            return true
        }
    }

    /// Whether stdout held `text`, or the child closed it, before `deadline`.
    func waitUntilOutput(contains text: Data, before deadline: Date) -> Bool {
        locked {
            while stdout.range(of: text) == nil && !outputClosed {
                if !condition.wait(until: deadline) { return stdout.range(of: text) != nil }
            }
            return true
        }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }
}

/// Starts the child on a thread of the child's own, then pumps its pipes there.
///
/// A child inherits the signal mask of the thread that starts it, and a test
/// runs on one of the pool's threads, which block nearly every signal: a
/// `sh` started there shrugs off SIGTERM. This thread blocks none when it
/// starts the child. It also outlives the child: Foundation tells the run loop
/// of the thread that started a child when the child ends.
///
/// One child starts at a time (``starting``). Foundation closes, in a new
/// child, the descriptors open when it lists `/proc/self/fd`; the pipes and
/// the end-of-child socket of a child another thread starts in between are
/// not among them and stay open in the new child. A long-lived one (a
/// collector a test runs for minutes) then holds a quick child's stdout and
/// socket, and the quick child's end is not seen until the long one ends
/// (a test took 226 s in CI so; `RunnerTests` starts children side by side
/// and looks at what each holds).
private final class Launch: @unchecked Sendable {
    private static let starting = NSLock()
    private let process: Process
    private let stdin: Data?
    private let state: ChildState
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<pid_t, any Error> = .failure(CocoaError(.featureUnsupported))

    init(process: Process, stdin: Data?, state: ChildState) {
        self.process = process
        self.stdin = stdin
        self.state = state
    }

    /// The child's pid once it runs, or why it could not start.
    func started() throws -> pid_t {
        done.wait()
        return try result.get()
    }

    func run() {
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        let pump: Pump
        do {
            Self.starting.lock()
            defer { Self.starting.unlock() }
            let output = Pipe()
            let error = Pipe()
            let input = stdin == nil ? nil : Pipe()
            process.standardOutput = output
            process.standardError = error
            process.standardInput = input ?? FileHandle.nullDevice
            // Foundation (on Linux) puts the child in a process group of its own, closes the
            // other descriptors it knows of in it, and closes the child's ends of the pipes here.
            try process.run()
            // Descriptors of the runner's own (close-on-exec), so that no FileHandle closes them
            // later and no child started after this one inherits them.
            pump = Pump(
                output: ownedCopy(of: output.fileHandleForReading), error: ownedCopy(of: error.fileHandleForReading),
                input: input.map { ownedCopy(of: $0.fileHandleForWriting) }, stdin: stdin ?? Data(), state: state)
        } catch {
            result = .failure(error)
            done.signal()
            return
        }
        result = .success(process.processIdentifier)
        done.signal()
        pump.run()
        state.waitUntilTerminated()
    }
}

/// Writes the child's stdin and reads its stdout and stderr, all at once, with
/// poll(2), until all three are closed.
private struct Pump: Sendable {
    let output: Int32
    let error: Int32
    let input: Int32?
    let stdin: Data
    let state: ChildState

    func run() {
        // A child that exits before reading all its stdin makes write(2) fail with EPIPE;
        // the SIGPIPE that comes with it is held back on this thread, never delivered.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)

        var readers: [(descriptor: Int32, isError: Bool)] = [(output, false), (error, true)]
        var writer = input
        var written = 0
        if let descriptor = writer {
            if stdin.isEmpty {
                close(descriptor)
                writer = nil
            } else {
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while !readers.isEmpty || writer != nil, !state.shouldStop {
            var polled = readers.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            if let writer { polled.append(pollfd(fd: writer, events: Int16(POLLOUT), revents: 0)) }
            // A timeout, so that a request to stop is seen while a grandchild holds the pipes.
            let ready = poll(&polled, nfds_t(polled.count), 100)
            if ready < 0 && errno != EINTR { break }
            guard ready > 0 else { continue }
            var closed: [Int32] = []
            for (index, reader) in readers.enumerated() where polled[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(reader.descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffer.withUnsafeBytes {
                        state.append(UnsafeRawBufferPointer(rebasing: $0[..<count]), error: reader.isError)
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    closed.append(reader.descriptor)
                }
            }
            for descriptor in closed { close(descriptor) }
            readers.removeAll { closed.contains($0.descriptor) }
            if let descriptor = writer, polled[polled.count - 1].revents != 0 {
                let count = stdin.withUnsafeBytes { bytes in
                    write(descriptor, bytes.baseAddress! + written, min(bytes.count - written, 1 << 16))
                }
                if count > 0 { written += count }
                if written == stdin.count || (count < 0 && errno != EINTR && errno != EAGAIN) {
                    close(descriptor)
                    writer = nil
                }
            }
        }
        for reader in readers { close(reader.descriptor) }
        if let writer { close(writer) }
        // Take back a SIGPIPE held for this thread (a write after the child closed its stdin).
        var pending = sigset_t()
        if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 {
            var taken: Int32 = 0
            sigwait(&pipeSignal, &taken)
        }
        state.outputDidClose()
    }
}
