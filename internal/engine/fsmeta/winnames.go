package fsmeta

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Names a snapshot may hold that Windows cannot: WindowsName maps each to
// one it can, by a rule that can be undone (docs/platforms.md):
//
//   - each of < > : " \ | ? *, each control character (U+0001 to U+001F)
//     and each byte that is not part of valid UTF-8 becomes %XX, the
//     byte's two upper-case hex digits, and so does % itself;
//   - a trailing dot or space becomes %2E or %20;
//   - a device name (CON, PRN, AUX, NUL, COM0 to COM9, LPT0 to LPT9,
//     COM¹²³, LPT¹²³, CONIN$, CONOUT$, in any case), alone or before an
//     extension ("aux.txt", "con .log"), has its first letter written as
//     %XX.
//
// Replacing every %XX of a mapped name by its byte gives the snapshot's
// name back. A name Windows can hold is kept as it is, % and all.

// WindowsName returns name as Windows can hold it, and whether it had to
// be changed.
func WindowsName(name string) (string, bool) {
	if !windowsNeedsMapping(name) {
		return name, false
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && size <= 1,
			i == 0 && isDeviceName(name),
			i+size == len(name) && (r == '.' || r == ' '),
			r < 0x20, r == '%', strings.ContainsRune(windowsReserved, r):
			for _, c := range []byte(name[i : i+size]) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		default:
			b.WriteString(name[i : i+size])
		}
		i += size
	}
	return b.String(), true
}

// windowsReserved are the characters no Windows file name may hold ("/"
// and NUL never reach here: no snapshot name holds them).
const windowsReserved = `<>:"\|?*`

// windowsNeedsMapping says whether Windows cannot hold name as it is.
func windowsNeedsMapping(name string) bool {
	if name == "" || !utf8.ValidString(name) || isDeviceName(name) {
		return name != ""
	}
	if last := name[len(name)-1]; last == '.' || last == ' ' {
		return name != "." && name != ".."
	}
	for _, r := range name {
		if r < 0x20 || strings.ContainsRune(windowsReserved, r) {
			return true
		}
	}
	return false
}

// isDeviceName says whether Windows takes name for a device: its part
// before the first dot, trailing spaces trimmed, is a device name.
func isDeviceName(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	base = strings.TrimRight(base, " ")
	switch strings.ToUpper(base) {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) < 4 {
		return false
	}
	switch strings.ToUpper(base[:3]) {
	case "COM", "LPT":
		switch rest := base[3:]; rest {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return true
		}
	}
	return false
}

// UnmapWindowsName undoes WindowsName: every %XX (upper-case hex) of a
// mapped name becomes its byte again. A name WindowsName kept as it was
// needs no undoing.
func UnmapWindowsName(mapped string) string {
	var b strings.Builder
	for i := 0; i < len(mapped); i++ {
		if mapped[i] == '%' && i+2 < len(mapped) {
			hi, ok1 := hexDigit(mapped[i+1])
			lo, ok2 := hexDigit(mapped[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(mapped[i])
	}
	return b.String()
}

// hexDigit is the value of an upper-case hex digit.
func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
