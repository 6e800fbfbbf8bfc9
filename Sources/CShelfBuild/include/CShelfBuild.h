#ifndef CSHELFBUILD_H
#define CSHELFBUILD_H

/* The commit a release was built from: scripts/package writes shelf_commit.h (not in git)
   with `#define SHELF_COMMIT "<hash>"`; other builds leave it empty. A header rather than
   -Xcc -D, so a release build and the manual plugin's build share one set of flags. */
#if __has_include("shelf_commit.h")
#include "shelf_commit.h"
#endif
#ifndef SHELF_COMMIT
#define SHELF_COMMIT ""
#endif

static inline const char *shelf_build_commit(void) { return SHELF_COMMIT; }

#endif
