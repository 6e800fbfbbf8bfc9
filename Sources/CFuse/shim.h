#ifndef SHELF_CFUSE_SHIM_H
#define SHELF_CFUSE_SHIM_H
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>
#include <errno.h>
#include <stddef.h>

/*
 * Wrappers for the parts of libfuse that Swift cannot call directly: the versioned
 * `fuse_session_loop_mt` macro, and the `fuse_file_info` bitfields (kept in one place
 * so the Swift side never depends on how the C compiler lays them out).
 */

/// Runs the multithreaded loop with a freshly made loop config; returns what the loop returns.
static inline int cfuse_session_loop_mt(struct fuse_session *se, unsigned clone_fd,
                                        unsigned max_idle_threads, unsigned max_threads) {
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    if (config == NULL) return -ENOMEM;
    fuse_loop_cfg_set_clone_fd(config, clone_fd);
    fuse_loop_cfg_set_idle_threads(config, max_idle_threads);
    fuse_loop_cfg_set_max_threads(config, max_threads);
    int result = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    return result;
}

static inline void cfuse_file_info_set_open_flags(struct fuse_file_info *fi, uint64_t fh,
                                                  int keep_cache, int direct_io,
                                                  int nonseekable, int cache_readdir,
                                                  int noflush) {
    fi->fh = fh;
    fi->keep_cache = keep_cache ? 1 : 0;
    fi->direct_io = direct_io ? 1 : 0;
    fi->nonseekable = nonseekable ? 1 : 0;
    fi->cache_readdir = cache_readdir ? 1 : 0;
    fi->noflush = noflush ? 1 : 0;
}

static inline int cfuse_file_info_writepage(const struct fuse_file_info *fi) {
    return fi->writepage;
}

#endif
