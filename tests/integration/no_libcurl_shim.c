/* A machine without libcurl, without uninstalling it: preloaded (LD_PRELOAD) into a program, it
 * makes dlopen() refuse every library whose name holds "libcurl"; other names pass through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

void* dlopen(const char* file, int mode) {
  static void* (*real_dlopen)(const char*, int);
  if (file && strstr(file, "libcurl")) return NULL;
  if (!real_dlopen) real_dlopen = (void* (*)(const char*, int))dlsym(RTLD_NEXT, "dlopen");
  return real_dlopen(file, mode);
}
