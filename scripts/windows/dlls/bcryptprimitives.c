/*
 * A stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks. Rust's std (1.78+) imports
 * ProcessPrng from it for its random numbers (HashMap seeds); without the DLL an addon built
 * with that std fails to load under Wine with "Module not found". ProcessPrng fills a buffer
 * with cryptographically random bytes and always succeeds; advapi32's SystemFunction036
 * (RtlGenRandom), which Wine has, does the same.
 *
 * Built by scripts/windows/setup.sh with the mingw-w64 compiler and copied into the Wine
 * prefix's system32. Only for running tests under Wine: real Windows has the real DLL.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    /* SystemFunction036 takes a 32-bit length: fill larger buffers in slices. */
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
