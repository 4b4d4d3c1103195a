// CRuntimeSymbols: dlsym for a meshchat linked with the Swift runtime inside it (see wrap_dlsym.c).
// Nothing here is for Swift code to call.
#ifndef CRUNTIMESYMBOLS_H
#define CRUNTIMESYMBOLS_H
#endif
