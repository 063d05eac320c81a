// Package crypt holds the repository's keys and the primitives built on
// them: AES-256-GCM sealing of every stored blob and metadata object, keyed
// blob ids (HMAC-SHA256), and key slots that wrap the master key once per
// credential (password via argon2id, 64-hex platform key, 24-word BIP39
// recovery key), and kms-platform slots, which hold the master key as an
// AWS KMS key encrypted it and are opened by the repository layer through
// internal/repo/kms.
//
// One 32-byte random master secret is created at init. HKDF-SHA256 derives
// three independent subkeys from it: the AEAD key, the blob-id MAC key and
// the chunker's gear-table key. Unencrypted repositories have no master
// secret: ids are plain SHA-256 and objects are stored unsealed.
package crypt
