// Loaded into shardify with LD_PRELOAD by staging_cleanup_test. The first mkdir of a staging
// directory (".NAME.partial-...") first removes its parent directory, if empty: what another
// writer does at that moment when it made the same new parent and then failed.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int removed_once;

static void remove_parent_of(const char* path, const char* slash) {
  char parent[4096];
  const size_t n = (size_t)(slash - path);
  if (n == 0 || n >= sizeof parent) return;
  memcpy(parent, path, n);
  parent[n] = '\0';
  if (rmdir(parent) == 0) {
    removed_once = 1;
    fprintf(stderr, "vanishing_parent: removed %s\n", parent);
  }
}

int mkdir(const char* path, mode_t mode) {
  static int (*real_mkdir)(const char*, mode_t);
  if (!real_mkdir) real_mkdir = (int (*)(const char*, mode_t))dlsym(RTLD_NEXT, "mkdir");
  const char* slash = strrchr(path, '/');
  if (!removed_once && slash && slash[1] == '.' && strstr(slash, ".partial-"))
    remove_parent_of(path, slash);
  return real_mkdir(path, mode);
}
