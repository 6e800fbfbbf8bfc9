// placeholder until ShelfStoreTests lands
