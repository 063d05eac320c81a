// Package pack defines how blobs are stored: each blob is compressed with
// zstd when that shrinks it, then sealed (see package crypt), and many
// sealed blobs are concatenated into one pack file of about 16 MiB so that a
// backup of many small files makes few store objects.
//
// Pack layout:
//
//	blob_0 | blob_1 | ... | blob_n-1 | sealed header | uint32 LE header length
//
// The header plaintext is a uint32 LE entry count followed by, per blob,
// 1 byte type, 32 bytes id and a uint32 LE sealed length; offsets follow
// from the order. Each blob's plaintext starts with one byte saying how the
// rest is encoded (0 raw, 1 zstd). A pack's id is the SHA-256 of its bytes.
package pack
