package config

import "strings"

// Setting is one setting of a store: how a store entry of profiles.yaml,
// the command line, the environment and the JSON documents of `store show`
// and `store new` name it. StoreSettings lists them all; the command
// line's flags, the application of a profile's store, `store show`,
// `store new`, copy's -from-* flags and docs/cli.md's table of store
// fields all come from that one list.
type Setting struct {
	// Key is the YAML key of its plain value in a store entry, also its
	// name in the JSON documents; "" when the file holds it only as a
	// secret reference (the password and keys).
	Key string
	// RefKey is the YAML key of its secret-reference form
	// ("s3_secret_key_secret"); "" when it has none.
	RefKey string
	// Flag is the global flag that gives it on the command line.
	Flag string
	// Env are the environment variables the flag defaults from; the first
	// one set wins.
	Env []string
	// Default is the flag's default when none of Env is set.
	Default string
	// Secret marks a value that is a secret: `store show` masks a plain
	// one, `store new` takes it only as a reference, -h never prints its
	// default.
	Secret bool
	// Extension marks a key that Cloudstic's schema does not have.
	Extension bool
	// Help is the flag's usage text, without the environment variables.
	Help string

	value, ref func(*Store) *string
}

// Value returns where s keeps the plain value of the setting; nil when
// the setting has no plain form in a store entry.
func (t Setting) Value(s *Store) *string {
	if t.value == nil {
		return nil
	}
	return t.value(s)
}

// Ref returns where s keeps the secret reference of the setting; nil
// when it has no reference form.
func (t Setting) Ref(s *Store) *string {
	if t.ref == nil {
		return nil
	}
	return t.ref(s)
}

// FlagDefault is the flag's default: the first of Env that getenv finds
// set, else Default.
func (t Setting) FlagDefault(getenv func(string) string) string {
	for _, e := range t.Env {
		if v := getenv(e); v != "" {
			return v
		}
	}
	return t.Default
}

// Usage is the flag's usage text: Help and the environment variables.
func (t Setting) Usage() string {
	if len(t.Env) == 0 {
		return t.Help
	}
	return t.Help + " (env " + strings.Join(t.Env, ", ") + ")"
}

// RefFlag is the flag of `store new` that takes the reference form
// ("-s3-secret-key-secret"): the RefKey with dashes.
func (t Setting) RefFlag() string { return strings.ReplaceAll(t.RefKey, "_", "-") }

// StoreSettings are the settings of a store, in the order `-h` and the
// documentation list them.
var StoreSettings = []Setting{
	{Key: "uri", Flag: "store", Env: []string{"CLOUDSTIC_STORE"}, Default: "local:./backup_store",
		Help:  "repository store: local:PATH, s3:BUCKET[/PREFIX], b2:BUCKET[/PREFIX] or sftp://[user@]host[:port]/path",
		value: func(s *Store) *string { return &s.URI }},
	{RefKey: "password_secret", Flag: "password", Env: []string{"CLOUDSTIC_PASSWORD"}, Secret: true,
		Help: "repository password (prompted on a terminal when missing)",
		ref:  func(s *Store) *string { return &s.PasswordSecret }},
	{RefKey: "encryption_key_secret", Flag: "encryption-key", Env: []string{"CLOUDSTIC_ENCRYPTION_KEY"}, Secret: true,
		Help: "platform key, 64 hex digits, instead of a password",
		ref:  func(s *Store) *string { return &s.EncryptionKeySecret }},
	{RefKey: "recovery_key_secret", Flag: "recovery-key", Env: []string{"CLOUDSTIC_RECOVERY_KEY"}, Secret: true,
		Help: "24-word recovery key, instead of a password",
		ref:  func(s *Store) *string { return &s.RecoveryKeySecret }},
	{Key: "s3_endpoint", Flag: "s3-endpoint", Env: []string{"CLOUDSTIC_S3_ENDPOINT"},
		Help:  "S3 endpoint URL for S3-compatible servers, path-style",
		value: func(s *Store) *string { return &s.S3Endpoint }},
	{Key: "s3_region", Flag: "s3-region", Env: []string{"CLOUDSTIC_S3_REGION"}, Default: "us-east-1",
		Help:  "S3 region",
		value: func(s *Store) *string { return &s.S3Region }},
	{Key: "s3_profile", Flag: "s3-profile", Env: []string{"CLOUDSTIC_S3_PROFILE", "AWS_PROFILE"},
		Help:  "AWS shared-config profile",
		value: func(s *Store) *string { return &s.S3Profile }},
	{Key: "s3_access_key", RefKey: "s3_access_key_secret", Flag: "s3-access-key", Env: []string{"AWS_ACCESS_KEY_ID"},
		Help:  "S3 access key id",
		value: func(s *Store) *string { return &s.S3AccessKey }, ref: func(s *Store) *string { return &s.S3AccessKeySecret }},
	{Key: "s3_secret_key", RefKey: "s3_secret_key_secret", Flag: "s3-secret-key", Env: []string{"AWS_SECRET_ACCESS_KEY"}, Secret: true,
		Help:  "S3 secret key",
		value: func(s *Store) *string { return &s.S3SecretKey }, ref: func(s *Store) *string { return &s.S3SecretKeySecret }},
	{Key: "b2_key_id", RefKey: "b2_key_id_secret", Flag: "b2-key-id", Env: []string{"B2_KEY_ID"},
		Help:  "Backblaze B2 application key id",
		value: func(s *Store) *string { return &s.B2KeyID }, ref: func(s *Store) *string { return &s.B2KeyIDSecret }},
	{Key: "b2_app_key", RefKey: "b2_app_key_secret", Flag: "b2-app-key", Env: []string{"B2_APP_KEY"}, Secret: true,
		Help:  "Backblaze B2 application key",
		value: func(s *Store) *string { return &s.B2AppKey }, ref: func(s *Store) *string { return &s.B2AppKeySecret }},
	{Key: "store_sftp_password", RefKey: "store_sftp_password_secret", Flag: "store-sftp-password", Env: []string{"CLOUDSTIC_STORE_SFTP_PASSWORD"}, Secret: true,
		Help:  "SSH password of an sftp:// store",
		value: func(s *Store) *string { return &s.StoreSFTPPassword }, ref: func(s *Store) *string { return &s.StoreSFTPPasswordSecret }},
	{Key: "store_sftp_key", RefKey: "store_sftp_key_secret", Flag: "store-sftp-key", Env: []string{"CLOUDSTIC_STORE_SFTP_KEY"},
		Help:  "SSH private key file of an sftp:// store (default: ssh-agent)",
		value: func(s *Store) *string { return &s.StoreSFTPKey }, ref: func(s *Store) *string { return &s.StoreSFTPKeySecret }},
	{Key: "store_sftp_known_hosts", Flag: "store-sftp-known-hosts", Env: []string{"CLOUDSTIC_STORE_SFTP_KNOWN_HOSTS"}, Extension: true,
		Help:  "known_hosts file of an sftp:// store (default ~/.ssh/known_hosts)",
		value: func(s *Store) *string { return &s.StoreSFTPKnownHosts }},
	{Key: "kms_key_arn", Flag: "kms-key-arn", Env: []string{"CLOUDSTIC_KMS_KEY_ARN"},
		Help:  "AWS KMS key (ARN, key id or alias) of a kms-platform key slot; such slots are tried first",
		value: func(s *Store) *string { return &s.KMSKeyARN }},
	{Key: "kms_region", Flag: "kms-region", Env: []string{"CLOUDSTIC_KMS_REGION"},
		Help:  "AWS KMS region (default: the key ARN's region, else AWS_REGION)",
		value: func(s *Store) *string { return &s.KMSRegion }},
	{Key: "kms_endpoint", Flag: "kms-endpoint", Env: []string{"CLOUDSTIC_KMS_ENDPOINT"},
		Help:  "AWS KMS endpoint URL",
		value: func(s *Store) *string { return &s.KMSEndpoint }},
}

// SettingByFlag returns the setting of a global flag.
func SettingByFlag(flag string) (Setting, bool) {
	for _, t := range StoreSettings {
		if t.Flag == flag {
			return t, true
		}
	}
	return Setting{}, false
}
