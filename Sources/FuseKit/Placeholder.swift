// placeholder until the FuseKit layer lands
