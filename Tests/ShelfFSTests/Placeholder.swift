// placeholder until ShelfFSTests lands
