// placeholder until the mount harness lands
