// Package config reads and writes cloudstic's profiles.yaml (Cloudstic's
// documented schema: stores, auth entries and backup profiles) and resolves
// the secret references its *_secret fields and -password-ref hold
// (env://, file://, config-token://, secret-service://, keychain://,
// wincred://).
//
// Loading is strict: an unknown key, a bad name or a value of the wrong
// type is an error naming the file, the line and the key. Writing edits the
// parsed YAML tree in place, so the user's comments, key order and fields
// this program does not use (the cloud-drive ones) survive a rewrite, and
// replaces the file atomically with mode 0600.
//
// The package does not import the CLI, the engine or the UI: it turns text
// into values, and the CLI decides what the values mean for a command.
package config
