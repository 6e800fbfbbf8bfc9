import Foundation
import Testing
import TestSupport

/// Removes the scratch folders a test made once it has passed (libraries of thousands of notes
/// add up over runs), and keeps them when it failed, naming each in a warning beside the failure
/// so the library, its logs and the cloud can be looked at. Every suite carries it
/// (`@Suite(.scratchFolders)`); the folders are the ones handed to ``ScratchScope``.
public struct ScratchFolders: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// Once per test case (each argument of a parameterised test has its own folders).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { testCase == nil ? nil : self }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let scope = ScratchScope()
        defer { finish(scope, test: test) }
        do {
            try await ScratchScope.$current.withValue(scope) {
                try await IssueHandlingTrait.compactMapIssues { issue in
                    if issue.isFailure { scope.markFailed() }
                    return issue
                }.provideScope(for: test, testCase: testCase, performing: function)
            }
        } catch {
            scope.markFailed()
            throw error
        }
    }

    private func finish(_ scope: ScratchScope, test: Test) {
        let (kept, becauseFailed) = scope.finish()
        for folder in kept {
            if becauseFailed {
                Issue.record("\(test.name) failed; its scratch folder is kept: \(folder.path)", severity: .warning)
            } else {
                print("\(test.name): scratch folder kept (SHELF_KEEP_SCRATCH): \(folder.path)")
            }
        }
    }
}

extension Trait where Self == ScratchFolders {
    /// Removes the scratch folders of each passing test (``ScratchFolders``).
    public static var scratchFolders: Self { ScratchFolders() }
}
