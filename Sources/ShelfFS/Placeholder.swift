// placeholder until the ShelfFS layer lands
