import Foundation
import ShelfStore

extension TooLargeFiles {
    /// The free name beside item file `path`: `<name>.too-large`, numbered `<name>.too-large-2`… if taken.
    static func name(beside path: MountPath, in plain: PlainFileArea) -> MountPath {
        var candidate = path.parent.appending(path.name + suffix)
        var number = 2
        while plain.exists(candidate) {
            candidate = path.parent.appending(path.name + suffix + "-\(number)")
            number += 1
        }
        return candidate
    }
}
