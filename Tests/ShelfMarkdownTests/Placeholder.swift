// placeholder until ShelfMarkdownTests lands
