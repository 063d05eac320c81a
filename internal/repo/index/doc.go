// Package index maps blob ids to their place in pack files. Each backup
// writes its own immutable index file naming the packs it uploaded and the
// blobs inside them; readers merge every index file into one in-memory
// Index. Nothing ever rewrites an index file a concurrent backup could be
// adding to: only prune, under the exclusive lock, replaces index files.
//
// File layout (before sealing): "CSIX", version byte 1, uint32 LE pack
// count, then per pack its 32-byte id, a uint32 LE blob count and per blob
// 1 byte type, 32 bytes id, uint32 LE offset, uint32 LE length.
package index
