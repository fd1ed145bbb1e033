import ArrivalTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The runner every test runs programs with (ArrivalTestSupport's
/// BuiltProduct.swift): output, input, exits, signals, hangs, and async
/// tests waiting on more children than the cooperative pool has threads.
@Suite("Running programs in tests")
struct RunnerTests {
    @Test("A child that writes megabytes to stderr before stdout ends, with every byte of both")
    func chattyChild() throws {
        // Reading stdout to its end before stderr would wait forever: the child blocks on a full stderr pipe.
        let result = try run(
            .path("/bin/sh"), ["-c", "head -c 3000000 /dev/zero >&2; head -c 2000000 /dev/zero | tr '\\0' o"],
            timeout: .seconds(60))
        #expect(result.status == 0 && result.signal == nil, "\(result)")
        #expect(result.standardError.count == 3_000_000 && result.standardError.allSatisfy { $0 == 0 })
        #expect(
            result.standardOutput.count == 2_000_000 && result.standardOutput.allSatisfy { $0 == UInt8(ascii: "o") })
    }

    @Test("stdin is delivered whole while stdout is read; without stdin, a reader of stdin sees its end at once")
    func standardInput() throws {
        var random = SystemRandomNumberGenerator()
        let input = Data((0..<(4 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) })
        let echoed = try run(.path("/bin/cat"), stdin: input, timeout: .seconds(60))
        #expect(echoed.status == 0, "\(echoed)")
        #expect(echoed.standardOutput == input)

        let nothing = try run(.path("/bin/cat"), timeout: .seconds(60))
        #expect(nothing.status == 0 && nothing.standardOutput.isEmpty, "\(nothing)")

        let payload = try run("arrival", ["check-payload", "-"], stdin: try fixtureData("payloads/ok.json"))
        #expect(payload.status == 0, "\(payload)")
        #expect(payload.stdout.contains("0 errors, 0 warnings"))
    }

    @Test("A child that exits before reading its stdin neither fails the run nor stops this process (SIGPIPE)")
    func unreadStandardInput() throws {
        let result = try run(.path("/bin/sh"), ["-c", "exit 4"], stdin: Data(count: 1 << 20), timeout: .seconds(60))
        #expect(result.status == 4 && result.signal == nil, "\(result)")
    }

    @Test("Exit status and signal: an exit code, and 128 + the signal with the signal named")
    func statusAndSignal() throws {
        let exited = try run(.path("/bin/sh"), ["-c", "echo out; echo err >&2; exit 3"])
        #expect(exited.status == 3 && exited.signal == nil, "\(exited)")
        #expect(exited.stdout == "out\n" && exited.stderr == "err\n")

        let signaled = try run(.path("/bin/sh"), ["-c", "kill -TERM $$"])
        #expect(signaled.signal == SIGTERM && signaled.status == 128 + SIGTERM, "\(signaled)")
    }

    @Test("Environment additions and the working directory reach the child; the rest of the environment is kept")
    func environmentAndDirectory() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try run(
            .path("/bin/sh"), ["-c", #"pwd -P; echo "$ARRIVAL_RUNNER_TEST"; echo "$PATH""#],
            environment: ["ARRIVAL_RUNNER_TEST": "added value"], in: directory)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first == directory.resolvingSymlinksInPath().path)
        #expect(lines.dropFirst().first == "added value")
        #expect(lines.dropFirst(2).first == ProcessInfo.processInfo.environment["PATH"])
    }

    @Test("A child that hangs is killed at the timeout, with what it started, and the run throws saying so")
    func timeout() throws {
        let clock = ContinuousClock()
        let started = clock.now
        // The shell starts `sleep` in the background, prints its pid and waits: two processes to kill.
        let error = try #require(throws: ProcessRunError.self) {
            try run(.path("/bin/sh"), ["-c", "sleep 60 & echo $!; wait"], timeout: .seconds(1))
        }
        #expect(clock.now - started < .seconds(20))
        #expect(error.description.contains("did not end within 1.0 seconds"), "\(error)")
        #expect(error.description.contains("SIGKILL"))
        #if os(Linux)
            // Foundation on Linux starts each child in a process group of its own, which the runner kills whole.
            let sleeper = try #require(
                error.description.split(separator: "\n").first { $0.hasPrefix("stdout: ") }
                    .flatMap { pid_t($0.dropFirst("stdout: ".count)) })
            #expect(processEnded(sleeper), "the background sleep \(sleeper) outlived the timeout")
        #endif
    }

    @Test("A started child: its pid, its output so far, a signal, and its end; a handle let go of kills its child")
    func longRunning() throws {
        let child = try ChildProcess(.path("/bin/sh"), ["-c", "echo ready; exec sleep 60"])
        #expect(child.pid > 0)
        #expect(try child.waitForOutput(containing: "ready\n", timeout: .seconds(60)) == "ready\n")
        #expect(child.isRunning)
        let end = try child.stop(SIGTERM, timeout: .seconds(60))
        #expect(end.signal == SIGTERM && end.stdout == "ready\n", "\(end)")
        #expect(!child.isRunning)

        var abandoned: ChildProcess? = try ChildProcess(.path("/bin/sh"), ["-c", "echo ready; exec sleep 60"])
        let pid = try #require(abandoned?.pid)
        try abandoned?.waitForOutput(containing: "ready\n", timeout: .seconds(60))
        abandoned = nil
        #expect(processEnded(pid), "sleep \(pid) outlived its handle")
    }

    @Test("Async tests wait off the cooperative pool: more children at once than it has threads, each waiting for all")
    func asyncWaitsOffThePool() async throws {
        // If a wait held a pool thread, the children started first would wait for ones whose tasks never run.
        let count = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = #"touch "$1/started-$2"; while [ "$(ls "$1" | wc -l)" -lt "$3" ]; do sleep 0.05; done; echo $2"#
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<count {
                group.addTask {
                    let result = try await run(
                        .path("/bin/sh"), ["-c", script, "sh", directory.path, "\(index)", "\(count)"],
                        timeout: .seconds(60))
                    #expect(result.status == 0, "\(result)")
                    return result.stdout
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(outputs) == Set((0..<count).map { "\($0)\n" }))

        let child = try ChildProcess("arrival", ["--version"])
        let version = try await child.wait(timeout: .seconds(60))
        #expect(version.status == 0 && !version.stdout.isEmpty, "\(version)")
    }

    @Test("A child started beside others holds only its own descriptors, so its end is seen while they run on")
    func childrenStartedTogether() throws {
        // Foundation's Process closes, in the child, the descriptors that were open when it
        // looked (/proc/self/fd); a pipe or end-of-child socket another thread made in
        // between went to that child too. A long-lived child holding a quick one's pipe hid
        // the quick one's end until the long one ended: a test stalled for 226 s in CI so.
        // Long-lived children start in a loop beside quick ones; none may hold more than its
        // stdin, stdout, stderr and the socket by which Foundation sees its own end, and every
        // quick one must be seen ending long before the deadline a `true` could need.
        let starter = LongChildren()
        Thread { starter.startUntilStopped(limit: 60) }.start()
        let quick = try (0..<200).map { _ in try run(.path("/bin/true"), timeout: .seconds(60)) }
        let held = starter.stop()
        defer { for child in held { _ = try? child.stop(SIGKILL, timeout: .seconds(60)) } }
        #expect(quick.allSatisfy { $0.status == 0 })
        #expect(held.count > 10, "only \(held.count) long-lived children started")
        for child in held {
            let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/fd")
                .compactMap(Int32.init).filter { $0 > 2 }
            let held = descriptors.map { descriptor in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.pid)/fd/\(descriptor)"))
                    ?? "?"
            }
            // Files another test opens meanwhile may come along (they hide no child's end); pipes and
            // sockets come only from starting children.
            let pipes = held.filter { $0.hasPrefix("pipe:") }
            let sockets = held.filter { $0.hasPrefix("socket:") }
            #expect(pipes.isEmpty && sockets.count <= 1, "child \(child.pid) holds \(held)")
        }
    }

    /// Whether `pid` is gone, or dead and waiting to be reaped, within 10 s.
    private func processEnded(_ pid: pid_t) -> Bool {
        for _ in 0..<200 {
            if kill(pid, 0) != 0 { return true }
            #if os(Linux)
                let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
                if let state = stat.split(separator: ")").last?.split(separator: " ").first, state == "Z" {
                    return true
                }
            #endif
            usleep(50_000)
        }
        return false
    }
}

/// Starts long-lived children on a thread of its own until told to stop.
private final class LongChildren: @unchecked Sendable {
    private let condition = NSCondition()
    private var children: [ChildProcess] = []
    private var stopRequested = false
    private var finished = false

    func startUntilStopped(limit: Int) {
        while condition.withLock({ !stopRequested && children.count < limit }) {
            if let child = try? ChildProcess(.path("/bin/sleep"), ["600"]) {
                condition.withLock { children.append(child) }
            }
        }
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }

    /// Stops the starting and returns the children started.
    func stop() -> [ChildProcess] {
        condition.withLock {
            stopRequested = true
            while !finished { condition.wait() }
            return children
        }
    }
}
