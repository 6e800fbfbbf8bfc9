-- /mnt/onboard/Good Omens.pdf
return {
    ["bookmarks"] = {
        [1] = {
            ["datetime"] = "2020-03-01 10:00:00",
            ["highlighted"] = true,
            ["notes"] = "It wasn't a dark and stormy night.",
            ["page"] = 12,
            ["text"] = "Page 12 It wasn't a dark and stormy night. @ 2020-03-01 10:00:00",
        },
        [2] = {
            ["datetime"] = "2020-03-02 11:00:00",
            ["highlighted"] = true,
            ["notes"] = "Just because it's a cliché doesn't mean it's not true.",
            ["page"] = 30,
            ["text"] = "A note the reader wrote.",
        },
        [3] = {
            ["datetime"] = "2020-03-03 12:00:00",
            ["page"] = 50,
            ["text"] = "Page 50 @ 2020-03-03 12:00:00",
        },
        [4] = {
            ["datetime"] = "2020-03-04 12:00:00",
            ["page"] = 60,
            ["text"] = "Remember the ending.",
        },
    },
    ["doc_props"] = {
        ["authors"] = "Terry Pratchett\
Neil Gaiman",
        ["title"] = "Good Omens",
    },
    ["highlight"] = {
        [12] = {
            [1] = {
                ["chapter"] = "In the Beginning",
                ["datetime"] = "2020-03-01 10:00:00",
                ["drawer"] = "lighten",
                ["pos0"] = {
                    ["page"] = 12,
                    ["x"] = 10.5,
                    ["y"] = 2.2e2,
                },
                ["text"] = "It wasn't a dark and stormy night.",
            },
        },
        [30] = {
            [1] = {
                ["datetime"] = "2020-03-02 11:00:00",
                ["drawer"] = "underscore",
                ["text"] = "Just because it's a cliché doesn't mean it's not true.",
            },
        },
    },
    ["percent_finished"] = 1,
    ["summary"] = {
        ["note"] = "Funny, and kind.",
        ["rating"] = 4,
        ["status"] = "complete",
    },
}
