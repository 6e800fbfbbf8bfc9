// placeholder until ShelfCLITests lands
