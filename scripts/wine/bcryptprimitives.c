/*
 * bcryptprimitives.dll for Wine 8: Go 1.24 and later read random bytes with
 * ProcessPrng from bcryptprimitives.dll, which Debian's Wine 8 does not have.
 * This one exports it over RtlGenRandom (advapi32's SystemFunction036).
 * Built by scripts/wine-setup.sh with Debian's mingw-w64; test-only.
 */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
		if (!RtlGenRandom(data, n)) return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
