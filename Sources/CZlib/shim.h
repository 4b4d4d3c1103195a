// CZlib: the system zlib (Debian's zlib1g-dev) for Places' gzip reader.
//
// zlib's inflateInit2 is a macro, which Swift cannot call; the inline helper below wraps
// it so Swift gets a plain function with the library's version and stream size filled in.
#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#include <zlib.h>

/// inflateInit2(strm, windowBits) as a function (the zlib macro does not import into Swift).
static inline int czlib_inflate_init2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

#endif
