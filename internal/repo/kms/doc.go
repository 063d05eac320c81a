// Package kms wraps and unwraps a repository's master secret with an AWS KMS
// key (aws-sdk-go-v2's KMS client), for kms-platform key slots.
//
// The master secret is encrypted directly by KMS (Encrypt accepts up to
// 4 KiB; the secret is 32 bytes), with an encryption context naming the
// repository id, so a slot copied into another repository does not open
// it. Failures map to one sentinel error each (unreachable, access denied,
// key disabled, key not found, wrong key, context mismatch). Nothing here
// logs plaintext: the SDK's logger gets no request or response bodies.
package kms
