import Foundation
import Testing
import TestSupport
import TestTraits

/// What the README promises when the cloud folder is not what a device can use: it stops sync
/// with an error that says why, and nothing in the library changes.
@Suite(.serialized, .scratchFolders) struct CloudRefusalTests {
    /// A library with the sample items linked to a new folder cloud in its scratch folder.
    func linkedSample() throws -> (ShelfCLI, cloud: String) {
        let cli = try ShelfCLI()
        let cloud = cli.scratch.appendingPathComponent("cloud").path
        try cli.run("init", cli.library.path)
        try #require(try cli.run("import", ShelfCLI.samples.appendingPathComponent("library").path).status == 0)
        try #require(try cli.run("cloud", "link", cloud, "--device", "laptop").status == 0)
        return (cli, cloud)
    }

    /// An older Shelf refuses a cloud a newer one wrote (a higher format in `shelf-cloud.json`):
    /// sync stops with an error naming the format, a new device does not link, and nothing of
    /// the library changes.
    @Test func anOlderShelfRefusesANewerCloud() throws {
        let (cli, cloud) = try linkedSample()
        let identity = URL(fileURLWithPath: cloud + "/shelf-cloud.json")
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: identity)) as? [String: Any])
        // Far past any format this Shelf reads: the next one up (3) is the encrypted cloud's.
        let newer = try #require(json["format"] as? Int) + 100
        json["format"] = newer
        try JSONSerialization.data(withJSONObject: json).write(to: identity)
        let listed = try cli.run("list", "--json").stdout

        let synced = try cli.run("sync")
        #expect(synced.status != 0 && synced.stderr.contains("newer Shelf (format \(newer)"), "\(synced)")
        #expect(try cli.run("cloud", "status").stdout.contains("newer Shelf"))
        #expect(try cli.run("list", "--json").stdout == listed)

        let other = try ShelfCLI()
        try other.run("init", other.library.path)
        let linked = try other.run("cloud", "link", cloud, "--device", "desk")
        #expect(linked.status != 0 && linked.stderr.contains("update Shelf"), "\(linked)")
        #expect(try other.run("status").stdout.contains("not linked"))
    }

    /// A cloud folder this user cannot read (its mode 000; root made to heed it by dropping
    /// the capabilities that bypass file modes): sync stops with the error, deletes nothing,
    /// and goes on once the folder can be read again.
    @Test func anUnreadableCloudFolderStopsSyncAndDeletesNothing() throws {
        let (cli, cloud) = try linkedSample()
        let listed = try cli.run("list", "--json").stdout
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: cloud)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: cloud) }

        let synced = try cli.tool("setpriv", ["--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all",
                                              ShelfCLI.executable.path, "sync", "--library", cli.library.path])
        #expect(synced.status != 0 && synced.stderr.contains("cannot read the cloud at \(cloud)")
                && synced.stderr.contains("permission"), "\(synced)")
        let status = try cli.run("cloud", "status")
        #expect(status.stdout.contains("Error:    cannot read the cloud at \(cloud)"), "\(status)")
        #expect(try cli.run("list", "--json").stdout == listed)

        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: cloud)
        #expect(try cli.run("sync").status == 0)
        #expect(try cli.run("list", "--json").stdout == listed)
    }

    /// A mounted device tidies the cloud by itself (no `shelf cloud compact`): its first round
    /// reports how far it has read, the acknowledgement maintenance writes.
    @Test func maintenanceRunsByItselfWhileMounted() throws {
        let (cli, cloud) = try linkedSample()
        let acks = cloud + "/acks"
        #expect((try? FileManager.default.contentsOfDirectory(atPath: acks)) ?? [] == [], "linking does not tidy")
        try cli.withMount { _ in
            #expect(eventually(within: .seconds(20)) {
                let devices = (try? FileManager.default.contentsOfDirectory(atPath: acks)) ?? []
                return devices.contains { !((try? FileManager.default.contentsOfDirectory(atPath: acks + "/" + $0)) ?? []).isEmpty }
            }, "the mount wrote no acknowledgement")
        }
    }
}
