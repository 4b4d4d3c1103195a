// CAvahi: libavahi-client loaded on first use (issue 16 item 7).
//
// Linking libavahi-client made every meshchat process load it with libavahi-common, libdbus-1,
// libsystemd and their libraries (libgcrypt, liblzma, libzstd, liblz4, libcap, libgpg-error),
// about 1 MB of resident pages, also with --no-discovery. Instead, each avahi function the
// Swift code calls is defined here as a hidden trampoline that calls the library's own,
// resolved with dlsym on first call; cavahi_load() (called by AvahiDiscovery before any other)
// dlopens the library once. Nothing else is changed: the Swift code calls the same names.
#include "shim.h"

#include <dlfcn.h>
#include <pthread.h>

static void *cavahi_library;
static const char *cavahi_failure;
static pthread_once_t cavahi_once = PTHREAD_ONCE_INIT;

static void cavahi_open(void) {
    cavahi_library = dlopen("libavahi-client.so.3", RTLD_NOW | RTLD_LOCAL);
    if (cavahi_library == NULL) {
        const char *reason = dlerror();
        cavahi_failure = reason != NULL ? reason : "dlopen failed";
    }
}

const char *cavahi_load(void) {
    pthread_once(&cavahi_once, cavahi_open);
    return cavahi_failure;
}

/// The library's `name`, or NULL (callers have had cavahi_load() succeed first).
static void *cavahi_symbol(const char *name) {
    if (cavahi_load() != NULL) return NULL;
    return dlsym(cavahi_library, name);
}

// A trampoline: `real` caches the library's function (a pointer-sized relaxed atomic).
#define CAVAHI_REAL(name) \
    static __typeof__(&name) real; \
    __typeof__(&name) fn = __atomic_load_n(&real, __ATOMIC_RELAXED); \
    if (fn == NULL) { fn = (__typeof__(&name))cavahi_symbol(#name); __atomic_store_n(&real, fn, __ATOMIC_RELAXED); }
#define CAVAHI_LAZY(ret, name, params, args) \
    __attribute__((visibility("hidden"))) ret name params { CAVAHI_REAL(name) return fn args; }
#define CAVAHI_LAZY_VOID(name, params, args) \
    __attribute__((visibility("hidden"))) void name params { CAVAHI_REAL(name) fn args; }

// avahi-common
CAVAHI_LAZY(char *, avahi_address_snprint, (char *s, size_t length, const AvahiAddress *a), (s, length, a))
CAVAHI_LAZY(char *, avahi_alternative_service_name, (const char *s), (s))
CAVAHI_LAZY(struct timeval *, avahi_elapse_time, (struct timeval *tv, unsigned ms, unsigned j), (tv, ms, j))
CAVAHI_LAZY_VOID(avahi_free, (void *p), (p))
CAVAHI_LAZY(const char *, avahi_strerror, (int error), (error))
CAVAHI_LAZY(AvahiStringList *, avahi_string_list_add_anonymous, (AvahiStringList *l, size_t size), (l, size))
CAVAHI_LAZY(AvahiStringList *, avahi_string_list_add_arbitrary, (AvahiStringList *l, const uint8_t *text, size_t size), (l, text, size))
CAVAHI_LAZY_VOID(avahi_string_list_free, (AvahiStringList *l), (l))
CAVAHI_LAZY(AvahiStringList *, avahi_string_list_get_next, (AvahiStringList *l), (l))
CAVAHI_LAZY(size_t, avahi_string_list_get_size, (AvahiStringList *l), (l))
CAVAHI_LAZY(uint8_t *, avahi_string_list_get_text, (AvahiStringList *l), (l))
CAVAHI_LAZY_VOID(avahi_threaded_poll_free, (AvahiThreadedPoll *p), (p))
CAVAHI_LAZY(const AvahiPoll *, avahi_threaded_poll_get, (AvahiThreadedPoll *p), (p))
CAVAHI_LAZY_VOID(avahi_threaded_poll_lock, (AvahiThreadedPoll *p), (p))
CAVAHI_LAZY(AvahiThreadedPoll *, avahi_threaded_poll_new, (void), ())
CAVAHI_LAZY(int, avahi_threaded_poll_start, (AvahiThreadedPoll *p), (p))
CAVAHI_LAZY(int, avahi_threaded_poll_stop, (AvahiThreadedPoll *p), (p))
CAVAHI_LAZY_VOID(avahi_threaded_poll_unlock, (AvahiThreadedPoll *p), (p))

// avahi-client
CAVAHI_LAZY(int, avahi_client_errno, (AvahiClient *c), (c))
CAVAHI_LAZY_VOID(avahi_client_free, (AvahiClient *c), (c))
CAVAHI_LAZY(AvahiClientState, avahi_client_get_state, (AvahiClient *c), (c))
CAVAHI_LAZY(AvahiClient *, avahi_client_new,
            (const AvahiPoll *api, AvahiClientFlags flags, AvahiClientCallback callback, void *userdata, int *error),
            (api, flags, callback, userdata, error))
CAVAHI_LAZY(int, avahi_entry_group_add_service_strlst,
            (AvahiEntryGroup *g, AvahiIfIndex interface, AvahiProtocol protocol, AvahiPublishFlags flags, const char *name,
             const char *type, const char *domain, const char *host, uint16_t port, AvahiStringList *txt),
            (g, interface, protocol, flags, name, type, domain, host, port, txt))
CAVAHI_LAZY(int, avahi_entry_group_commit, (AvahiEntryGroup *g), (g))
CAVAHI_LAZY(int, avahi_entry_group_free, (AvahiEntryGroup *g), (g))
CAVAHI_LAZY(AvahiClient *, avahi_entry_group_get_client, (AvahiEntryGroup *g), (g))
CAVAHI_LAZY(AvahiEntryGroup *, avahi_entry_group_new, (AvahiClient *c, AvahiEntryGroupCallback callback, void *userdata),
            (c, callback, userdata))
CAVAHI_LAZY(int, avahi_entry_group_reset, (AvahiEntryGroup *g), (g))
CAVAHI_LAZY(int, avahi_entry_group_update_service_txt_strlst,
            (AvahiEntryGroup *g, AvahiIfIndex interface, AvahiProtocol protocol, AvahiPublishFlags flags, const char *name,
             const char *type, const char *domain, AvahiStringList *txt),
            (g, interface, protocol, flags, name, type, domain, txt))
CAVAHI_LAZY(int, avahi_service_browser_free, (AvahiServiceBrowser *b), (b))
CAVAHI_LAZY(AvahiClient *, avahi_service_browser_get_client, (AvahiServiceBrowser *b), (b))
CAVAHI_LAZY(AvahiServiceBrowser *, avahi_service_browser_new,
            (AvahiClient *c, AvahiIfIndex interface, AvahiProtocol protocol, const char *type, const char *domain,
             AvahiLookupFlags flags, AvahiServiceBrowserCallback callback, void *userdata),
            (c, interface, protocol, type, domain, flags, callback, userdata))
CAVAHI_LAZY(int, avahi_service_resolver_free, (AvahiServiceResolver *r), (r))
CAVAHI_LAZY(AvahiClient *, avahi_service_resolver_get_client, (AvahiServiceResolver *r), (r))
CAVAHI_LAZY(AvahiServiceResolver *, avahi_service_resolver_new,
            (AvahiClient *c, AvahiIfIndex interface, AvahiProtocol protocol, const char *name, const char *type,
             const char *domain, AvahiProtocol aprotocol, AvahiLookupFlags flags, AvahiServiceResolverCallback callback,
             void *userdata),
            (c, interface, protocol, name, type, domain, aprotocol, flags, callback, userdata))
