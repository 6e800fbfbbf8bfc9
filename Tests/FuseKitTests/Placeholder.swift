// placeholder until FuseKitTests lands
