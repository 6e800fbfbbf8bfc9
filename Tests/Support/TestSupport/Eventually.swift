import Foundation

/// Polls `condition` until it holds or `timeout` passes; returns whether it held (checked once
/// more at the deadline, so a slow machine gets the last word).
public func eventually(within timeout: Duration = .seconds(10), _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return try condition()
}
