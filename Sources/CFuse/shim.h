#ifndef SHELF_CFUSE_SHIM_H
#define SHELF_CFUSE_SHIM_H
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>
#endif
