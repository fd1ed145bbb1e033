/// The UTC day of a time in milliseconds: days since 1970-01-01 (floor).
@inlinable @inline(__always)
public func utcDay(of milliseconds: Int64) -> Int64 {
    milliseconds >= 0 ? milliseconds / Milliseconds.day : (milliseconds + 1) / Milliseconds.day - 1
}

/// The UTC hour of a time in milliseconds: hours since the epoch (floor).
@inlinable @inline(__always)
public func utcHour(of milliseconds: Int64) -> Int64 {
    milliseconds >= 0 ? milliseconds / Milliseconds.hour : (milliseconds + 1) / Milliseconds.hour - 1
}
