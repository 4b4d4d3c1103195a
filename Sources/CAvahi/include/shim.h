// CAvahi: libavahi-client (the avahi-daemon D-Bus client) for Swift.
//
// The library is not linked: shim.c loads it on first use (cavahi_load), so a process that never
// discovers (meshchat --no-discovery) never maps it, libdbus or libsystemd.
//
// The headers below are what MeshDiscovery's Avahi backend uses. Avahi's variadic helpers
// (avahi_entry_group_add_service, avahi_string_list_new) do not import into Swift; the
// backend uses the *_strlst / avahi_string_list_add_arbitrary forms instead. The static
// inline helpers give Swift typed constants (anonymous C enums import as Int) and the few
// bits of C that are clumsy from Swift (a union test, if_indextoname with its buffer).
#ifndef CAVAHI_SHIM_H
#define CAVAHI_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/address.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/timeval.h>

/// Loads libavahi-client.so.3 (once; later calls return the first result). Call it before any
/// avahi_* function.
/// - Returns: NULL when loaded, else dlerror's reason (static text; do not free).
const char *cavahi_load(void);

/// AVAHI_IF_UNSPEC as an AvahiIfIndex: every interface.
static inline AvahiIfIndex cavahi_if_unspec(void) { return AVAHI_IF_UNSPEC; }
/// AVAHI_PROTO_UNSPEC as an AvahiProtocol: both IPv4 and IPv6.
static inline AvahiProtocol cavahi_proto_unspec(void) { return AVAHI_PROTO_UNSPEC; }
/// AVAHI_PROTO_INET as an AvahiProtocol.
static inline AvahiProtocol cavahi_proto_inet(void) { return AVAHI_PROTO_INET; }
/// AVAHI_PROTO_INET6 as an AvahiProtocol.
static inline AvahiProtocol cavahi_proto_inet6(void) { return AVAHI_PROTO_INET6; }

/// The buffer size avahi_address_snprint needs (AVAHI_ADDRESS_STR_MAX).
static inline size_t cavahi_address_str_max(void) { return AVAHI_ADDRESS_STR_MAX; }

/// 1 when `a` is an IPv6 link-local address (fe80::/10), which needs an interface scope to be
/// connected to; 0 otherwise.
static inline int cavahi_address_is_ipv6_link_local(const AvahiAddress *a) {
    if (a == NULL || a->proto != AVAHI_PROTO_INET6) return 0;
    return a->data.ipv6.address[0] == 0xfe && (a->data.ipv6.address[1] & 0xc0) == 0x80;
}

/// The buffer size cavahi_interface_name needs (IF_NAMESIZE).
static inline size_t cavahi_interface_name_max(void) { return IF_NAMESIZE; }

/// Writes the name of interface `index` into `buffer` (at least cavahi_interface_name_max()
/// bytes) and returns 1, or returns 0 when there is no such interface.
static inline int cavahi_interface_name(AvahiIfIndex index, char *buffer) {
    if (index < 0) return 0;
    return if_indextoname((unsigned int)index, buffer) != NULL;
}

#endif
