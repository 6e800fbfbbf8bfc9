return {
    ["annotations"] = {
        [1] = { ["drawer"] = "lighten", ["pos0"] = "/body/p[1]", ["text"] = "You have power over your mind.", ["pageno"] = 3 },
    },
    ["doc_props"] = { ["authors"] = "Marcus Aurelius", ["title"] = "Meditations" },
}
