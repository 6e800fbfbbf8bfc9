import ArgumentParser

/// `shelf LIBRARY MOUNTPOINT -o OPTIONS`, the form mount.fuse3 runs for an /etc/fstab line of
/// type `fuse.shelf` (and for `mount -t fuse.shelf LIBRARY MOUNTPOINT`), read as
/// `shelf mount --library LIBRARY MOUNTPOINT …`.
///
/// mount.fuse3 passes the line's options through, less those it handles itself; the generic
/// ones the kernel or mount(8) own (`rw`, `nosuid`, `x-systemd.*`…) mean nothing to Shelf and
/// are passed over, Shelf's own are flags of `shelf mount`, and anything else is an error
/// naming it, so a typo in fstab is not silently ignored.
enum MountHelperArguments {
    /// Options of mount(8), systemd and the kernel that Shelf's mount has no use for.
    private static let generic: Set<String> = [
        "rw", "defaults", "auto", "noauto", "user", "users", "nouser", "owner", "group", "_netdev", "nofail",
        "dev", "nodev", "suid", "nosuid", "exec", "noexec", "atime", "noatime", "relatime", "norelatime",
        "strictatime", "diratime", "nodiratime", "lazytime", "nolazytime", "async", "sync", "silent", "loud",
        "default_permissions",
    ]

    /// The arguments as a `shelf mount` command line, or nil when they are not the helper's form.
    static func translate(_ arguments: [String], subcommands: [any ParsableCommand.Type]) throws -> [String]? {
        guard let first = arguments.first, !first.hasPrefix("-"),
              !subcommands.contains(where: { $0._commandName == first }), first != "help" else { return nil }
        var positional: [String] = []
        var options: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "-o" {
                guard index + 1 < arguments.count else { throw CLIError("-o needs a list of options, like -o allow_other,notify.") }
                options += arguments[index + 1].split(separator: ",").map(String.init)
                index += 2
                continue
            }
            if argument.hasPrefix("-o"), argument.count > 2 {
                options += argument.dropFirst(2).split(separator: ",").map(String.init)
            } else if argument == "-f" {
                options.append("foreground")
            } else if argument.hasPrefix("-") {
                throw CLIError("`\(argument)` is not an option of `shelf LIBRARY MOUNTPOINT -o OPTIONS`; pass Shelf's options with -o (e.g. -o allow_other,notify).")
            } else {
                positional.append(argument)
            }
            index += 1
        }
        guard positional.count == 2 else {
            throw CLIError("unknown command `\(first)`; run `shelf --help` for the commands, or mount with `shelf LIBRARY MOUNTPOINT -o OPTIONS`.")
        }
        var translated = ["mount", "--library", positional[0], positional[1]]
        for option in options where !option.isEmpty {
            let (name, value) = option.split(separator: "=", maxSplits: 1).map(String.init).splitPair
            switch name {
            case _ where generic.contains(name) || name.hasPrefix("x-") || name == "comment": continue
            case "allow_other": translated.append("--allow-other")
            case "notify": translated.append("--notify")
            case "debug": translated.append("--debug")
            case "foreground": translated.append("--foreground")
            case "poll_interval", "download_timeout":
                guard let value else { throw CLIError("-o \(name) needs a value in seconds, like -o \(name)=10.") }
                translated += ["--" + name.replacingOccurrences(of: "_", with: "-"), value]
            case "ro":
                throw CLIError("Shelf mounts are read-write (edits are the point); remove `ro` from the options.")
            default:
                throw CLIError("unknown mount option `\(option)`; Shelf takes allow_other, notify, debug, poll_interval=S and download_timeout=S (generic ones such as rw, nosuid, x-systemd.* are passed over).")
            }
        }
        return translated
    }
}

private extension Array where Element == String {
    /// `["a", "b"]` → ("a", "b"); `["a"]` → ("a", nil).
    var splitPair: (String, String?) { (self.first ?? "", count > 1 ? self[1] : nil) }
}
