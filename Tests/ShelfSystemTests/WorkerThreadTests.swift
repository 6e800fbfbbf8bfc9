import Foundation
import ShelfSystem
import Synchronization
import Testing
import TestTraits

@Suite(.scratchFolders) struct WorkerThreadTests {
    /// A loop that waits for work ends when stopped, because `wake` makes it look again.
    @Test func stopWakesAWaitingLoopAndWaitsForItToEnd() {
        let worker = WorkerThread(name: "test.waiting")
        let condition = NSCondition()
        let waiting = DispatchSemaphore(value: 0)
        #expect(worker.start {
            condition.withLock {
                while !worker.isStopping {
                    waiting.signal()  // the lock is let go only inside wait(): stop's wake comes after
                    condition.wait()
                }
            }
        })
        #expect(waiting.wait(timeout: .now() + 10) == .success, "the loop waits for work")
        #expect(worker.isRunning)
        #expect(worker.stop(within: .seconds(10)) { condition.withLock { condition.broadcast() } })
        #expect(!worker.isRunning && worker.isStopping)
    }

    /// A worker runs once: a second start, or a start after a stop, runs nothing.
    @Test func aWorkerStartsOnceAndNeverAfterAStop() {
        let runs = Atomic<Int>(0)
        let worker = WorkerThread(name: "test.once")
        #expect(worker.start { runs.add(1, ordering: .relaxed) })
        #expect(!worker.start { runs.add(1, ordering: .relaxed) })
        #expect(worker.stop(within: .seconds(10)))
        #expect(runs.load(ordering: .relaxed) == 1)

        let neverStarted = WorkerThread(name: "test.never")
        #expect(neverStarted.stop(within: .seconds(10)), "a worker never started has nothing to wait for")
        #expect(!neverStarted.start { runs.add(1, ordering: .relaxed) })
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    /// A loop held in a call that does not return (a system call stuck in a dead mount) makes
    /// `stop` give up at its deadline and say so, instead of holding up its caller.
    @Test func stopGivesUpAtItsDeadlineWhileTheLoopIsHeld() {
        let worker = WorkerThread(name: "test.held")
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        worker.start {
            entered.signal()
            release.wait()
        }
        #expect(entered.wait(timeout: .now() + 10) == .success)
        #expect(!worker.stop(within: .milliseconds(50)), "the loop is still held")
        #expect(worker.isRunning)
        release.signal()
        #expect(worker.stop(within: .seconds(10)), "released, it ends; a second stop waits for that")
        #expect(!worker.isRunning)
    }
}
