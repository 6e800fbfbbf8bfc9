-- we can read Lua syntax here!
return {
    ["doc_props"] = {
        ["title"] = os.execute("touch /tmp/shelf-ran-lua"),
    },
}
