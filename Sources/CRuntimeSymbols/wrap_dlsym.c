// dlsym for a meshchat release build, which links the Swift runtime and Foundation into the
// executable (-static-stdlib, Package.swift; issue 16 item 7).
//
// The Swift driver links the static runtime with --exclude-libs ALL, so none of its symbols is in
// the executable's dynamic symbol table and dlsym finds none of them. SwiftNIO finds Swift
// concurrency's swift_task_enqueueGlobal_hook with dlsym to run tasks on its event loops
// (EventLoops.installAsConcurrencyExecutor, first thing in meshchat's main); without it, it returns
// false and every task hops between the concurrency pool's threads and the loops. So the release
// link passes --wrap=dlsym: every call of dlsym in the executable comes here, this one name is
// answered with the runtime's own variable (linked in, so its address is known), and every other
// name goes to the C library's dlsym unchanged. Builds without the flag (debug) compile nothing.
#ifdef MESHCHAT_WRAP_DLSYM
#include <stddef.h>
#include <string.h>

extern void *swift_task_enqueueGlobal_hook;
void *__real_dlsym(void *handle, const char *name);

void *__wrap_dlsym(void *handle, const char *name) {
    if (name != NULL && strcmp(name, "swift_task_enqueueGlobal_hook") == 0) return &swift_task_enqueueGlobal_hook;
    return __real_dlsym(handle, name);
}
#endif
