// placeholder until the ShelfImport layer lands
