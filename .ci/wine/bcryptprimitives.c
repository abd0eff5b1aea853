/*
 * A stand-in for Windows' bcryptprimitives.dll, for running Go test
 * binaries under wine in CI only (never shipped). Go 1.22 and later load
 * bcryptprimitives.dll from system32 at start and call ProcessPrng for
 * random bytes; Debian 12's wine 8.0 does not have that DLL, so every Go
 * program dies at start ("bcryptprimitives.dll not found"). This one
 * exports ProcessPrng and fills the buffer from RtlGenRandom
 * (advapi32's SystemFunction036), which wine has.
 *
 * Built by .ci/run with Debian's mingw-w64:
 *   x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	while (size > 0) {
		ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}
