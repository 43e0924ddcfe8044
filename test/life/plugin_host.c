/* plugin_host.c - a program without MPI that loads a plug-in (argv[1])
 * with dlopen and calls its plugin_run. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: plugin_host PLUGIN.so\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("FAIL: dlopen: %s\n", dlerror());
        return 1;
    }
    int (*run)(void) = (int (*)(void))dlsym(h, "plugin_run");
    if (!run) {
        printf("FAIL: no plugin_run in %s\n", argv[1]);
        return 1;
    }
    return run();
}
