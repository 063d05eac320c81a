// Package restore writes a snapshot (or part of it) back out, as a
// directory tree or a zip archive. Directory restores never overwrite an
// existing file and never write outside the output directory, whatever
// names a damaged or hostile repository holds. A file whose data cannot be
// read or verified is removed and reported; everything else is restored.
//
// Workers restore files in parallel: small files planned per pack in a
// bounded window and read in batches, one request per range of a pack
// (batch.go), large files in segments written at their offsets by several
// workers at once (large.go). From a store across a network more workers
// than cores stream their reads, one request per range of a pack, taking
// each chunk as it arrives, and share fewer decoders (restoreShape,
// stream.go, buffers.go).
package restore
