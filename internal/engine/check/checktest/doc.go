// Package checktest builds small real repositories for the tests of check,
// prune and forget: a local store, small chunks and packs (so that a few
// megabytes make many packs), snapshots made by the real backup engine and
// byte-for-byte comparison of real restores.
package checktest
