// Package repotest gives the engine's tests a real encrypted repository on
// the local store in a temporary directory, opened through a store that
// counts which objects are read. It lives under internal/repo because it
// wraps a store: the engine's packages reach stores only through the
// repository.
package repotest
