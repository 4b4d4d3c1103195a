// LD_PRELOAD, for measuring which pages of the main executable's code a run touches: before the
// executable's own initialisers run, mark its mappings MADV_RANDOM (no read-around), drop its code
// pages from this process and from the page cache, so that every later fault reads and maps one page.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
__attribute__((constructor)) static void rand_exe(void) {
    char exe[4096]; ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return; exe[n] = 0;
    FILE *f = fopen("/proc/self/maps", "r"); if (!f) return;
    int fd = open(exe, O_RDONLY);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b, off; char perms[8], path[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &a, &b, perms, &off, path) >= 4 && strcmp(path, exe) == 0) {
            madvise((void *)a, b - a, MADV_RANDOM);
            if (strchr(perms, 'x')) {
                madvise((void *)a, b - a, MADV_DONTNEED);
                if (fd >= 0) posix_fadvise(fd, off, b - a, POSIX_FADV_DONTNEED);
            }
        }
    }
    if (fd >= 0) close(fd);
    fclose(f);
    unsetenv("LD_PRELOAD");
}
