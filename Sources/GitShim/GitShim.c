#include "GitShim.h"
#include <git2.h>

int docsync_git_set_ssl_cert_locations(const char *file, const char *path) {
    return git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, file, path);
}

int docsync_git_set_search_path(int level, const char *path) {
    return git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, path);
}

int docsync_git_set_mwindow_limits(size_t window_size, size_t mapped_limit) {
    int error = git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, window_size);
    if (error < 0) return error;
    return git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, mapped_limit);
}

size_t docsync_git_mwindow_size(void) {
    size_t size = 0;
    git_libgit2_opts(GIT_OPT_GET_MWINDOW_SIZE, &size);
    return size;
}

size_t docsync_git_mwindow_mapped_limit(void) {
    size_t limit = 0;
    git_libgit2_opts(GIT_OPT_GET_MWINDOW_MAPPED_LIMIT, &limit);
    return limit;
}
