#ifndef DOCSYNC_GIT_SHIM_H
#define DOCSYNC_GIT_SHIM_H

// git_libgit2_opts is variadic, which Swift cannot call: these wrap the options docsync
// uses, one fixed signature each.

/// Trust the CA certificates in `file` (and/or the hashed directory `path`) for https.
int docsync_git_set_ssl_cert_locations(const char *file, const char *path);

/// Where libgit2 looks for global/xdg/system config (level: GIT_CONFIG_LEVEL_*).
int docsync_git_set_search_path(int level, const char *path);

#include <stddef.h>

/// How much of a pack file libgit2 maps at a time (window_size) and in all (mapped_limit).
int docsync_git_set_mwindow_limits(size_t window_size, size_t mapped_limit);
size_t docsync_git_mwindow_size(void);
size_t docsync_git_mwindow_mapped_limit(void);

#endif
