package config

import (
	"errors"

	"github.com/zalando/go-keyring"
)

// SystemKeyring is the platform keyring through github.com/zalando/go-keyring:
// the Secret Service over the D-Bus session bus on Linux (service is the
// item's "service" attribute, which a secret-service://COLLECTION/ITEM
// reference fills with COLLECTION, and account its "username", ITEM), the
// Keychain on macOS, the Credential Manager on Windows.
type SystemKeyring struct{}

// Get reads one item; a missing item is ErrSecretNotFound.
func (SystemKeyring) Get(service, account string) (string, error) {
	v, err := keyring.Get(service, account)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", ErrSecretNotFound
	}
	return v, err
}

// Set creates or replaces one item.
func (SystemKeyring) Set(service, account, secret string) error {
	return keyring.Set(service, account, secret)
}
