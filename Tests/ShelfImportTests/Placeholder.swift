// placeholder until ShelfImportTests lands
