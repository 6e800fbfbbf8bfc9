import GRDB

/// The library's SQLite schema, as an ordered list of migrations.
///
/// Every process that opens a library runs the migrator, so an older library is brought up to
/// date by whichever program touches it first; migrations already applied are skipped.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration(migration.name) { db in try db.execute(sql: migration.sql) }
        }
        return migrator
    }

    /// Each migration's name, which the library records once it has run (so never renamed),
    /// and its SQL, oldest first.
    private static let migrations: [(name: String, sql: String)] = [
        // `serial` is an explicit INTEGER PRIMARY KEY so the rowid the search index points
        // at can never be renumbered (VACUUM may renumber implicit rowids).
        ("v1: items, change feed, full-text search", """
            CREATE TABLE item (
                serial INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                kind TEXT NOT NULL,
                title TEXT NOT NULL,
                path TEXT NOT NULL,
                version INTEGER NOT NULL,
                modified REAL NOT NULL,
                record BLOB NOT NULL,
                content TEXT NOT NULL,
                size INTEGER NOT NULL,
                draft_diagnostics BLOB,
                favorite INTEGER NOT NULL,
                source_id TEXT,
                trashed_at REAL
            );
            -- Paths are unique among live items only: a trashed item keeps the path it
            -- had, for restore, while a new item may take it.
            CREATE UNIQUE INDEX item_live_path ON item(path) WHERE trashed_at IS NULL;
            CREATE INDEX item_source_id ON item(source_id) WHERE source_id IS NOT NULL;
            CREATE INDEX item_trashed_at ON item(trashed_at) WHERE trashed_at IS NOT NULL;

            CREATE TABLE change_feed (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL,
                item_id TEXT NOT NULL,
                path TEXT NOT NULL,
                previous_path TEXT
            );

            -- rowid = item.serial. A regular (not contentless) table, because snippet()
            -- needs the indexed text.
            CREATE VIRTUAL TABLE item_search USING fts5(
                title, author, body, tokenize = 'unicode61 remove_diacritics 2'
            );
            """),
        // Listing reads only these columns, but in the table they sit behind the record and
        // content blobs: without this index a cold listing of 100,000 items reads every
        // overflow page of every file. It holds every column ItemQueries.summaryColumns and
        // its filter name (SQLite covers only plain columns, not expressions on them).
        ("v2: covering index for listings", """
            CREATE INDEX item_live_summary ON item(
                path, id, kind, title, version, modified, size, favorite, draft_diagnostics, trashed_at
            ) WHERE trashed_at IS NULL;
            """),
        // Content is bound as a BLOB since bytes became bytes end to end (a TEXT binding
        // ends at the first NUL); the column's TEXT affinity keeps BLOBs as they are. Old
        // rows are converted so every row stores the same type.
        ("v3: file content as bytes", "UPDATE item SET content = CAST(content AS BLOB) WHERE typeof(content) = 'text'"),
        // What a file showed before each change of its bytes, so a bad save (a crash
        // mid-write replayed from the journal, a mistaken edit) never costs the last good one.
        ("v4: previous versions of every item", """
            CREATE TABLE item_history (
                item_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                modified REAL NOT NULL,
                content BLOB NOT NULL,
                was_draft INTEGER NOT NULL,
                PRIMARY KEY (item_id, version)
            ) WITHOUT ROWID;
            """),
        // What `chmod` and `setfattr` set on an item file, so rsync -a, cp -p and tar keep
        // them. The listing index is rebuilt to cover the new column.
        ("v5: file mode bits and extended attributes of items", """
            ALTER TABLE item ADD COLUMN permissions INTEGER NOT NULL DEFAULT 420;
            CREATE TABLE item_attribute (
                item_id TEXT NOT NULL,
                name TEXT NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (item_id, name)
            ) WITHOUT ROWID;
            DROP INDEX item_live_summary;
            CREATE INDEX item_live_summary ON item(
                path, id, kind, title, version, modified, size, favorite, draft_diagnostics, permissions,
                trashed_at
            ) WHERE trashed_at IS NULL;
            """),
        // What sync remembers (see SyncLedger): the cloud this library is linked to and how
        // far it has read and written it, every cloud change it has seen (merge bases and
        // ancestry), and per item the cloud change its current state descends from. Changes
        // in the feed now carry their time: where two devices' edits cannot merge, the
        // newest wins.
        ("v6: cloud link and sync ledger", """
            ALTER TABLE change_feed ADD COLUMN time REAL;
            CREATE TABLE cloud_link (
                singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                location TEXT NOT NULL,
                cloud TEXT NOT NULL,
                device TEXT NOT NULL,
                device_name TEXT NOT NULL,
                cursor BLOB NOT NULL,
                next_batch INTEGER NOT NULL,
                pushed_sequence INTEGER NOT NULL,
                linked REAL NOT NULL,
                last_sync REAL,
                offline_since REAL,
                error TEXT
            );
            CREATE TABLE cloud_change (
                id TEXT PRIMARY KEY,
                item_id TEXT NOT NULL,
                body BLOB NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE item_sync (
                item_id TEXT PRIMARY KEY,
                change_id TEXT NOT NULL
            ) WITHOUT ROWID;
            ALTER TABLE cloud_link ADD COLUMN download_all INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE cloud_link ADD COLUMN cache_limit INTEGER;
            -- Placeholders: items whose bytes are still in the cloud, by hash (and why the
            -- last download failed). The item row holds their metadata and true size.
            CREATE TABLE item_download (
                item_id TEXT PRIMARY KEY,
                hash TEXT NOT NULL,
                error TEXT
            ) WITHOUT ROWID;
            -- Items this device keeps downloaded whatever the cache budget says.
            CREATE TABLE item_pin (item_id TEXT PRIMARY KEY) WITHOUT ROWID;
            -- How each version of an item came to be (edit, import, sync, merge, conflict,
            -- restore) and on which device, for `shelf history`.
            CREATE TABLE item_origin (
                item_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                reason TEXT NOT NULL,
                device TEXT,
                PRIMARY KEY (item_id, version)
            ) WITHOUT ROWID;
            -- Plain files (attachments, settings, folders): per path, the cloud change this
            -- device's copy last agreed with.
            CREATE TABLE plain_sync (path TEXT PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID;
            -- Cloud changes held back while a program has the item locked or unsaved writes
            -- in it, in arrival order.
            CREATE TABLE sync_deferred (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                item_id TEXT NOT NULL,
                body BLOB NOT NULL
            );
            """),
        // Filled in by the sync engine when it first needs it (see SyncLedger).
        ("v7: depth of cloud changes in their item's history", "ALTER TABLE cloud_change ADD COLUMN generation INTEGER"),
        ("v8: what a pull holds back", "ALTER TABLE cloud_link ADD COLUMN waiting TEXT"),
        // Set when Shelf, not a person, trashed it (a repair); shown by `shelf trash list`.
        ("v9: why an item went to the trash", "ALTER TABLE item ADD COLUMN trash_reason TEXT"),
        // A kept version's bytes as the hashes of its chunks (HistoryChunks), so the versions
        // of a large file cost about what their differences do. Rows kept before keep their
        // bytes in `content` (`chunks` NULL). A rowid table: chunks are up to 64 KiB.
        ("v10: kept versions share their bytes in chunks", """
            CREATE TABLE history_chunk (
                id INTEGER PRIMARY KEY,
                hash BLOB NOT NULL UNIQUE,
                content BLOB NOT NULL,
                refs INTEGER NOT NULL
            );
            ALTER TABLE item_history ADD COLUMN size INTEGER;
            ALTER TABLE item_history ADD COLUMN chunks BLOB;
            """),
        // Set by `chown`, or by another user creating the file through `--allow-other`
        // (``FileOwner``); an item without a row belongs to the mount's owner.
        ("v11: owners of item files", """
            CREATE TABLE item_owner (
                item_id TEXT PRIMARY KEY REFERENCES item(id) ON DELETE CASCADE,
                uid INTEGER NOT NULL,
                gid INTEGER NOT NULL
            ) WITHOUT ROWID
            """),
    ]
}
