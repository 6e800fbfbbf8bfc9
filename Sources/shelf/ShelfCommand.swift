import ArgumentParser

/// `shelf`: a reading library kept in SQLite and mounted as a folder of Markdown files.
@main
struct ShelfCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shelf",
        abstract: "A reading library of books, passages and notes, mounted as a folder of Markdown files.",
        discussion: """
            Every command takes --library PATH (or SHELF_LIBRARY); without either, the library \
            chosen by the last `shelf init` is used (remembered in $XDG_CONFIG_HOME/shelf/config.toml).
            """,
        subcommands: [
            InitCommand.self, MountCommand.self, UnmountCommand.self, ImportCommand.self,
            ExportCommand.self, ListCommand.self, ShowCommand.self, SearchCommand.self,
            StatusCommand.self, TrashCommand.self, HistoryCommand.self, RestoreCommand.self, CloudCommand.self, SyncCommand.self, DownloadCommand.self, PinCommand.self, UnpinCommand.self,
            EvictCommand.self, WatchCommand.self,
        ]
    )
}
