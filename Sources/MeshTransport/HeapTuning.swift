#if canImport(Glibc)
import Glibc
#endif

/// Heap settings for a process that moves large messages through a session.
///
/// With glibc's defaults, freed memory above 128 KiB at the top of the heap goes back to the system
/// at once, and allocations above a threshold that adapts upwards from 128 KiB are separate
/// mappings. A link allocates and frees buffers of 64 KiB to a few MiB for every large message, so
/// with the defaults nearly every one of them is fresh memory whose pages fault in, one by one
/// (measured with `meshbench crypto`: ChaChaPoly.seal of 64 KiB records ran at about half speed).
public enum HeapTuning {
    /// Allocations up to this size come from the heap: 4 MiB.
    public static let mappingThreshold = 4 * 1024 * 1024
    /// Free memory at the top of the heap kept for reuse: 8 MiB.
    public static let trimThreshold = 8 * 1024 * 1024

    /// Keeps up to ``trimThreshold`` bytes of freed heap for reuse and serves allocations up to
    /// ``mappingThreshold`` from the heap (glibc `mallopt`; elsewhere nothing happens).
    ///
    /// For executables only, first thing in `main`: a library must not change the process's
    /// allocator. An idle process is not affected; a busy one keeps at most ``trimThreshold``
    /// bytes more than it uses.
    /// - Returns: whether the settings were applied.
    @discardableResult
    public static func keepFreedMemoryForReuse() -> Bool {
        #if canImport(Glibc)
        // <malloc.h>: M_TRIM_THRESHOLD is -1, M_MMAP_THRESHOLD is -3.
        return glibcMallopt(-3, Int32(mappingThreshold)) == 1 && glibcMallopt(-1, Int32(trimThreshold)) == 1
        #else
        return false
        #endif
    }
}

#if canImport(Glibc)
/// glibc's `int mallopt(int param, int value)`, which the Glibc module does not export (<malloc.h>).
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif
