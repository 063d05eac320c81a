// Package check verifies a repository without locking it: every snapshot
// (or one) resolves to trees and blobs, every referenced blob is in the
// index, every index entry lies in an existing pack whose own header agrees
// with it, and, with Options.ReadData, every blob of every (or a subset
// of) pack decrypts and hashes to its id. Problems are collected, not
// returned as errors: Result.Errors for damage ([missing], [corrupt]) and
// Result.Notes for harmless leftovers of an interrupted backup or prune.
package check
