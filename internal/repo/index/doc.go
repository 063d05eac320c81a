// Package index maps blob ids to their place in pack files. Each backup
// writes its own immutable index file naming the packs it uploaded and the
// blobs inside them; readers merge every index file into one in-memory
// Index. Nothing ever rewrites an index file a concurrent backup could be
// adding to: only prune, under the exclusive lock, replaces index files.
//
// The in-memory Index is compact so that a repository of ten million blobs
// fits well under a gigabyte: every entry is a fixed-size
// record (48 bytes) in pages that never move, pack ids are interned to
// small integers, and lookups binary-search a sorted array of 8-byte keys;
// pages and keys live in anonymous mappings outside the Go heap (mem.go).
// Blobs added after the last merge (a running backup's) sit in a small
// delta that is merged once it grows past a fraction of the whole.
//
// Beyond that an Index may have an on-disk part (Disk, disk.go): a local
// file of every distinct blob's entry, sorted, in checksummed 4 KiB
// blocks, that lookups read with a pread each, keeping only 8 bytes per
// 85 blobs in memory. DiskBuilder writes it in bounded memory (sorted
// runs, merged). Backups, restores and mounts of large repositories use
// it so that their memory does not grow with the repository. Check and
// prune build one of their own (repo.ScratchIndex) and walk every
// snapshot with a DiskSet, a bit per blob of the file (diskset.go).
//
// File layout (before sealing): "CSIX", a version byte, uint32 LE pack
// count, then per pack its 32-byte id, a uint32 LE blob count and per blob
// 1 byte type, 32 bytes id, uint32 LE offset, uint32 LE length (the sealed
// length in the pack) and, from version 2 on, uint32 LE plain length (the
// blob's length after decryption and decompression, which lets readers map
// a file offset to a blob without reading the blobs before it). Version 1
// files, written before plain lengths were recorded, still read: their
// blobs' plain length is 0, which means unknown. Writers always write
// version 2; a plain length of 0 is allowed there too (entries carried over
// from version 1 files by prune).
package index
