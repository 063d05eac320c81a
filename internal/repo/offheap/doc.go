// Package offheap maps anonymous memory outside the Go heap, for the
// repository's big pointer-free buffers (pack buffers, index arrays): the
// collector neither scans it nor counts it towards the heap whose size
// paces it. mmap(2) on Unix, VirtualAlloc on Windows.
package offheap
