import GRDB

// Each table's columns by name, declared once (GRDB's `Columns`): every read names what it
// takes, so a migration that adds a column renumbers nothing and a slip cannot decode the
// wrong one. A select list aliases what it computes to a name declared here.

/// `item`, and what its selects compute.
enum ItemColumns: String, ColumnExpression {
    case serial, id, kind, title, path, version, modified, record, content, size, favorite, permissions
    case draftDiagnostics = "draft_diagnostics", trashedAt = "trashed_at", trashReason = "trash_reason"
    /// `draft_diagnostics IS NOT NULL`.
    case hasDraft = "has_draft"
    /// `trashed_at IS NULL`.
    case isLive = "is_live"
    /// Whether an `item_download` row holds the item's bytes in the cloud.
    case isPlaceholder = "is_placeholder"
    /// The file's byte count, `length(content)`.
    case contentLength = "content_length"
}

/// `item_attribute`: extended attributes of item files.
enum ItemAttributeColumns: String, ColumnExpression {
    case itemID = "item_id", name, value
}

/// `item_search`: the full-text index (rowid = `item.serial`).
enum ItemSearchColumns: String, ColumnExpression {
    case title, author, body
}

/// `item_download`: placeholders' bytes in the cloud.
enum ItemDownloadColumns: String, ColumnExpression {
    case itemID = "item_id", hash, error
}

/// `item_history` joined with `item_origin`: kept versions and how each came to be.
enum ItemHistoryColumns: String, ColumnExpression {
    case itemID = "item_id", version, modified, size, content, chunks, reason, device
    case wasDraft = "was_draft"
}

/// `change_feed`.
enum ChangeFeedColumns: String, ColumnExpression {
    case sequence, kind, path, time
    case itemID = "item_id", previousPath = "previous_path"
}

/// `cloud_link`: the one row of the library's link to its cloud.
enum CloudLinkColumns: String, ColumnExpression {
    case location, cloud, device, cursor, linked, error, waiting
    case deviceName = "device_name", nextBatch = "next_batch", pushedSequence = "pushed_sequence"
    case lastSync = "last_sync", offlineSince = "offline_since", downloadAll = "download_all", cacheLimit = "cache_limit"
}

/// `plain_sync`: per plain file, the cloud change its copy here last agreed with.
enum PlainSyncColumns: String, ColumnExpression {
    case path, body
}

/// `sync_deferred`: cloud changes held back, in arrival order.
enum SyncDeferredColumns: String, ColumnExpression {
    case sequence, body
    case itemID = "item_id"
}

/// `item_owner`.
enum ItemOwnerColumns: String, ColumnExpression {
    case itemID = "item_id", uid, gid
}

/// What a search selects from `item` and `item_search`.
enum SearchHitColumns: String, ColumnExpression {
    case id, kind, title, path, snippet
}
