//go:build winetest

package winetest

import _ "unsafe" // for go:linkname

// deleteatFallback is Go's internal/syscall/windows.TestDeleteatFallback:
// when set, Deleteat deletes with FileDispositionInformation only.
//
//go:linkname deleteatFallback internal/syscall/windows.TestDeleteatFallback
var deleteatFallback bool

func init() { deleteatFallback = true }
