import ArrivalBeacons
import Foundation

// A helper for the instrumentation tests and the append benchmark. It is a
// separate process on purpose: the tests need several writers at once and
// one they can SIGKILL.
//
//   beacon-stress write CONTAINER FILE_PID TAG COUNT [PAD]
//       appends COUNT render beacons (activity "stress-TAG", seq 0..<COUNT,
//       a device_model of PAD bytes) as the widget process FILE_PID, then
//       prints the writer's statistics. COUNT 0 writes until killed and
//       prints "running" once 200 beacons are on disk. FILE_PID "self" is
//       the helper's own pid, as in production.
//   beacon-stress bench CONTAINER COUNT
//       times COUNT appends (one at a time, and a burst), then the collector's
//       batch of the burst (see Documentation/Instrumenting.md).
//   beacon-stress batch CONTAINER OUT.gz
//       bundles every beacon file under CONTAINER into OUT.gz and prints the sizes.

let arguments = Array(CommandLine.arguments.dropFirst())

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

guard let mode = arguments.first else {
    fail("usage: beacon-stress write CONTAINER FILE_PID TAG COUNT [PAD] | bench CONTAINER COUNT")
}

switch mode {
case "write":
    guard arguments.count >= 5, let pid = arguments[2] == "self" ? getpid() : Int32(arguments[2]),
        let count = Int(arguments[4]), count >= 0
    else {
        fail("usage: beacon-stress write CONTAINER FILE_PID TAG COUNT [PAD]")
    }
    let pad = arguments.count >= 6 ? Int(arguments[5]) ?? 0 : 0
    var configuration = BeaconWriter.Configuration(
        container: URL(fileURLWithPath: arguments[1]), role: .widget,
        device: DeviceInfo(deviceID: "dev-\(arguments[3])", deviceModel: String(repeating: "x", count: pad)))
    configuration.processID = pid
    configuration.maxFileBytes = .max
    configuration.maxDirectoryBytes = .max
    configuration.maxPending = 1 << 20
    let writer = BeaconWriter(configuration)
    let activity = "stress-" + arguments[3]
    if count > 0 {
        for seq in 0..<count {
            writer.render(activityID: activity, seq: seq, surface: RenderBeacon.Surface.lockScreen)
            if seq % 256 == 255 { writer.flush() }  // keep the queue short, like a real widget
        }
        writer.flush()
        let stats = writer.statistics
        print("written \(stats.written) dropped \(stats.dropped)")
    } else {
        var seq = 0
        while true {
            writer.render(activityID: activity, seq: seq, surface: RenderBeacon.Surface.lockScreen)
            seq += 1
            if seq == 200 {
                writer.flush()
                FileHandle.standardOutput.write(Data("running\n".utf8))
            } else if seq % 64 == 0 {
                writer.flush()
            }
        }
    }
case "bench":
    guard arguments.count >= 3, let count = Int(arguments[2]), count > 0 else {
        fail("usage: beacon-stress bench CONTAINER COUNT")
    }
    let clock = ContinuousClock()
    let container = URL(fileURLWithPath: arguments[1])
    func makeWriter(_ name: String) -> BeaconWriter {
        var configuration = BeaconWriter.Configuration(
            container: container.appendingPathComponent(name), role: .widget,
            device: DeviceInfo(
                deviceID: "4f3a9c1e2b7d6a05", osVersion: "18.1", deviceModel: "iPhone16,2", appVersion: "4.2.0"))
        configuration.maxFileBytes = .max
        configuration.maxDirectoryBytes = .max
        configuration.maxPending = count + 1
        return BeaconWriter(configuration)
    }
    let activity = "7C1E0B9A-3F2D-4E55-9A61-2B8D4C0E7F13"

    // 1. One beacon at a time, each waited for: hand-off + encode + write(2).
    let single = makeWriter("single")
    var latencies: [Double] = []
    latencies.reserveCapacity(count)
    for seq in 0..<count {
        let elapsed = clock.measure {
            single.render(activityID: activity, seq: seq, surface: RenderBeacon.Surface.lockScreen)
            single.flush()
        }
        latencies.append(seconds(elapsed) * 1e6)
    }
    latencies.sort()
    let median = latencies[latencies.count / 2]
    let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]

    // 2. A burst: what the caller pays per call, and the cost per beacon
    //    until all are on disk.
    let burst = makeWriter("burst")
    var callerSeconds = 0.0
    let total = clock.measure {
        callerSeconds = seconds(
            clock.measure {
                for seq in 0..<count {
                    burst.render(activityID: activity, seq: seq, surface: RenderBeacon.Surface.lockScreen)
                }
            })
        burst.flush()
    }
    let stats = (single.statistics, burst.statistics)
    guard stats.0.written == count, stats.1.written == count else {
        fail("not every beacon was written: \(stats)")
    }
    // 3. The collector's batch of the burst: size and time (an app-side cost, not the widget's).
    let collector = BeaconCollector(
        container: container.appendingPathComponent("burst"), processID: -1,
        isProcessAlive: { _ in false })
    var batch: BeaconBatch?
    let batchTime = clock.measure { batch = collector.makeBatch() }
    let raw = batch?.files.reduce(0) { $0 + $1.bytes } ?? 0
    print(
        String(
            format: "collector batch: %d bytes of beacons -> %d bytes gzip (%.1f×) in %.1f ms",
            raw, batch?.gzip.count ?? 0, Double(raw) / Double(max(batch?.gzip.count ?? 1, 1)), seconds(batchTime) * 1000
        ))
    print(
        String(
            format:
                "beacon append: %d beacons; one at a time (write + wait until written): median %.1f µs, p99 %.1f µs; burst: caller %.2f µs/beacon, until on disk %.2f µs/beacon",
            count, median, p99, callerSeconds * 1e6 / Double(count), seconds(total) * 1e6 / Double(count)))
case "batch":
    // Bundles every closed beacon file under CONTAINER/LiveActivityBeacons (all processes taken as gone)
    // and prints the sizes, for comparing the kit's gzip with other compressors on the same bytes.
    guard arguments.count >= 3 else { fail("usage: beacon-stress batch CONTAINER OUT.gz") }
    let collector = BeaconCollector(
        container: URL(fileURLWithPath: arguments[1]), processID: -1,
        maxBatchBytes: Int.max, isProcessAlive: { _ in false })
    let clock = ContinuousClock()
    var batch: BeaconBatch?
    let elapsed = clock.measure { batch = collector.makeBatch() }
    guard let batch else { fail("no beacon files under \(arguments[1])/LiveActivityBeacons") }
    do { try batch.gzip.write(to: URL(fileURLWithPath: arguments[2])) } catch {
        fail("cannot write \(arguments[2]): \(error)")
    }
    let raw = batch.files.reduce(0) { $0 + $1.bytes }
    print(
        String(
            format: "batch: %d files, %d bytes -> %d bytes gzip (%.1f×) in %.1f ms",
            batch.files.count, raw, batch.gzip.count, Double(raw) / Double(batch.gzip.count), seconds(elapsed) * 1000))
default:
    fail("unknown mode '\(mode)'")
}
