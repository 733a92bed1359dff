#include <git2.h>
// Not part of git2.h: the pack writer (git_odb_writepack) docsync streams a large
// commit's blobs into.
#include <git2/sys/odb_backend.h>
