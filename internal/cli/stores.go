package cli

import (
	"flag"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/sftp"
)

// s3Flags configure s3: and b2: stores.
type s3Flags struct {
	endpoint, region, profile, accessKey, secretKey string
	b2KeyID, b2AppKey, b2Region                     string
	conditionalWrites                               string
}

func (f *s3Flags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.endpoint, "s3-endpoint", getenv("CLOUDSTIC_S3_ENDPOINT"), "S3 endpoint URL for S3-compatible servers, path-style (env CLOUDSTIC_S3_ENDPOINT)")
	fs.StringVar(&f.region, "s3-region", envOr(getenv, "CLOUDSTIC_S3_REGION", "us-east-1"), "S3 region (env CLOUDSTIC_S3_REGION)")
	fs.StringVar(&f.profile, "s3-profile", envOr(getenv, "CLOUDSTIC_S3_PROFILE", getenv("AWS_PROFILE")), "AWS shared-config profile (env CLOUDSTIC_S3_PROFILE, AWS_PROFILE)")
	fs.StringVar(&f.accessKey, "s3-access-key", getenv("AWS_ACCESS_KEY_ID"), "S3 access key (default AWS_ACCESS_KEY_ID)")
	fs.StringVar(&f.secretKey, "s3-secret-key", getenv("AWS_SECRET_ACCESS_KEY"), "S3 secret key (default AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&f.b2KeyID, "b2-key-id", getenv("B2_KEY_ID"), "Backblaze B2 application key id (env B2_KEY_ID)")
	fs.StringVar(&f.b2AppKey, "b2-app-key", getenv("B2_APP_KEY"), "Backblaze B2 application key (env B2_APP_KEY)")
	fs.StringVar(&f.b2Region, "b2-region", "us-west-004", "Backblaze B2 region")
	fs.StringVar(&f.conditionalWrites, "s3-conditional-writes", envOr(getenv, "CLOUDSTIC_S3_CONDITIONAL_WRITES", "auto"),
		"conditional writes the s3:/b2: store may use: auto (what the server is probed to honour), create-only or none (env CLOUDSTIC_S3_CONDITIONAL_WRITES)")
}

// sftpFlags configure sftp:// stores.
type sftpFlags struct {
	key, password, knownHosts string
	insecure                  bool
}

func (f *sftpFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.key, "store-sftp-key", getenv("CLOUDSTIC_STORE_SFTP_KEY"), "SSH private key file (env CLOUDSTIC_STORE_SFTP_KEY; default: ssh-agent)")
	fs.StringVar(&f.password, "store-sftp-password", getenv("CLOUDSTIC_STORE_SFTP_PASSWORD"), "SSH password (env CLOUDSTIC_STORE_SFTP_PASSWORD)")
	fs.StringVar(&f.knownHosts, "store-sftp-known-hosts", getenv("CLOUDSTIC_STORE_SFTP_KNOWN_HOSTS"), "known_hosts file (env CLOUDSTIC_STORE_SFTP_KNOWN_HOSTS; default ~/.ssh/known_hosts)")
	fs.BoolVar(&f.insecure, "store-sftp-insecure", false, "INSECURE: accept any SSH host key")
}

// credentialHint says how to give an s3: or b2: store credentials.
func credentialHint(scheme string) string {
	if scheme == "b2" {
		return "give -b2-key-id and -b2-app-key (or B2_KEY_ID and B2_APP_KEY), or a profile's s3_access_key_secret/s3_secret_key_secret"
	}
	return "give AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, -s3-profile, -s3-access-key and -s3-secret-key, or a profile's s3_access_key_secret/s3_secret_key_secret"
}

// isLocal reports whether a -store value names a local directory (see
// operation.IsLocal).
func isLocal(store string) bool { return operation.IsLocal(store) }

// storeOptions are the operation layer's options for the store -store
// names, from the store flags and the environment.
func (a *app) storeOptions(forInit bool) (operation.StoreOptions, error) {
	f := a.g.s3
	cond, err := s3.ParseConditionalWrites(f.conditionalWrites)
	if err != nil && (strings.HasPrefix(a.g.store, "s3:") || strings.HasPrefix(a.g.store, "b2:")) {
		return operation.StoreOptions{}, usageErr("-s3-conditional-writes (env CLOUDSTIC_S3_CONDITIONAL_WRITES) %v", err)
	}
	if err := a.g.timeouts.check(); err != nil && !isLocal(a.g.store) {
		return operation.StoreOptions{}, err
	}
	o := operation.StoreOptions{
		URI:    a.g.store,
		Create: forInit,
		S3: s3.Config{ConditionalWrites: cond, Endpoint: f.endpoint, Region: f.region, Profile: f.profile,
			AccessKey: f.accessKey, SecretKey: f.secretKey,
			ConnectTimeout: a.g.timeouts.connect, ResponseTimeout: a.g.timeouts.response},
		B2:          operation.B2Options{KeyID: f.b2KeyID, AppKey: f.b2AppKey, Region: f.b2Region},
		SFTP:        a.sftpConfig(),
		Connections: a.g.storeConns,
		TestWrapper: a.io.TestStoreWrapper,
	}
	if a.g.debug {
		o.Logf = a.debugf
	}
	return o, nil
}

// sftpConfig is the authentication of sftp:// stores: the -store-sftp-*
// flags and what the environment gives: the login name ($USER) for URLs
// that name none, ~/.ssh/known_hosts when no -store-sftp-known-hosts was
// given, and the ssh-agent ($SSH_AUTH_SOCK).
func (a *app) sftpConfig() sftp.Config {
	f := a.g.sftp
	cfg := sftp.Config{Config: sshconn.Config{User: a.io.Getenv("USER"), KeyFile: f.key, Password: f.password,
		KnownHostsFile: f.knownHosts, InsecureIgnoreHostKey: f.insecure, AgentSocket: a.io.Getenv("SSH_AUTH_SOCK"),
		ConnectTimeout: a.g.timeouts.connect, ResponseTimeout: a.g.timeouts.response}}
	if home := a.io.Getenv("HOME"); cfg.KnownHostsFile == "" && home != "" {
		cfg.KnownHostsFile = filepath.Join(home, ".ssh", "known_hosts")
	}
	return cfg
}
