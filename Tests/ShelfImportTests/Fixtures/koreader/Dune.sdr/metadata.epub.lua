-- we can read Lua syntax here!
return {
    ["annotations"] = {
        [1] = {
            ["chapter"] = "Book One: Dune",
            ["color"] = "yellow",
            ["datetime"] = "2025-11-03 21:14:05",
            ["drawer"] = "lighten",
            ["note"] = "The litany.",
            ["page"] = "/body/DocFragment[3]/body/p[12]/text().0",
            ["pageno"] = 42,
            ["pos0"] = "/body/DocFragment[3]/body/p[12]/text().0",
            ["pos1"] = "/body/DocFragment[3]/body/p[12]/text().41",
            ["text"] = "I must not fear.\
Fear is the mind-killer.",
        },
        [2] = {
            ["chapter"] = "Book One: Dune",
            ["datetime"] = "2025-11-04 08:00:00",
            ["drawer"] = "underscore",
            ["page"] = "/body/DocFragment[4]/body/p[3]/text().0",
            ["pageno"] = 57,
            ["pos0"] = "/body/DocFragment[4]/body/p[3]/text().0",
            ["pos1"] = "/body/DocFragment[4]/body/p[3]/text().30",
            ["text"] = "\"Muad\226\128\153Dib\" means \x22the mouse\x22 \\ caf\195\169.",
        },
        [3] = {
            ["datetime"] = "2025-11-05 09:00:00",
            ["page"] = "/body/DocFragment[5]/body/p[1]",
            ["pageno"] = 80,
            ["text"] = "in Book Two",
        },
        [4] = {
            ["chapter"] = "Book Two: Muad'Dib",
            ["datetime"] = "2025-11-06 10:00:00",
            ["note"] = "Reread the dinner scene.",
            ["page"] = "/body/DocFragment[6]/body/p[9]",
            ["pageno"] = 95,
        },
    },
    ["doc_pages"] = 412,
    ["doc_props"] = {
        ["authors"] = "Frank Herbert",
        ["identifiers"] = "uuid:0b1e6f7a-1c2d\
calibre:17\
isbn:9780441013593",
        ["description"] = "<p>Set on the desert planet <b>Arrakis</b>.</p>",
        ["keywords"] = "Science Fiction\
Classics",
        ["language"] = "en",
        ["series"] = "Dune Chronicles",
        ["series_index"] = 1,
        ["title"] = "Dune",
    },
    ["percent_finished"] = 0.5,
    ["summary"] = {
        ["modified"] = "2025-11-06",
        ["status"] = "reading",
    },
}
