/* A full disk for one directory, without mounting anything: preloaded (LD_PRELOAD) into a test,
 * it makes write() fail with ENOSPC when the file written lies under $SHARDKIT_TEST_FULL_DIR and
 * the regular files there would then hold more than $SHARDKIT_TEST_FULL_BYTES. Other writes pass
 * through untouched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static __thread unsigned long long used_bytes;

static int add_size(const char* path, const struct stat* st, int type, struct FTW* ftw) {
  (void)path;
  (void)ftw;
  if (type == FTW_F && S_ISREG(st->st_mode)) used_bytes += (unsigned long long)st->st_size;
  return 0;
}

static int under_full_dir(int fd, const char* dir) {
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = 0;
  const size_t len = strlen(dir);
  return strncmp(path, dir, len) == 0 && (path[len] == '/' || path[len] == 0);
}

ssize_t write(int fd, const void* buf, size_t count) {
  static ssize_t (*real_write)(int, const void*, size_t);
  if (!real_write) real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  const char* dir = getenv("SHARDKIT_TEST_FULL_DIR");
  const char* capacity = getenv("SHARDKIT_TEST_FULL_BYTES");
  if (dir && capacity && fd > 2 && under_full_dir(fd, dir)) {
    used_bytes = 0;
    nftw(dir, add_size, 16, FTW_PHYS);
    if (used_bytes + count > strtoull(capacity, NULL, 10)) {
      errno = ENOSPC;
      return -1;
    }
  }
  return real_write(fd, buf, count);
}
