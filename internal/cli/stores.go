package cli

import (
	"flag"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/sshconn"
)

// s3Flags are the flags of s3: and b2: stores that a store entry of
// profiles.yaml does not hold (those are config.StoreSettings, in
// globals.repo).
type s3Flags struct {
	b2Region          string
	conditionalWrites string
}

func (f *s3Flags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.b2Region, "b2-region", "us-west-004", "Backblaze B2 region")
	fs.StringVar(&f.conditionalWrites, "s3-conditional-writes", envOr(getenv, "CLOUDSTIC_S3_CONDITIONAL_WRITES", "auto"),
		"conditional writes the s3:/b2: store may use: auto (what the server is probed to honour), create-only or none (env CLOUDSTIC_S3_CONDITIONAL_WRITES)")
}

// fromOnlyFlags are the global flags besides config.StoreSettings' that
// say where a repository is and how to open it: copy takes them a second
// time with a "from-" prefix too (see fromFlagNames).
var fromOnlyFlags = []string{"b2-region", "s3-conditional-writes", "store-sftp-insecure", "password-ref", "password-file", "password-command", "profile"}

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
	f, st := a.g.s3, a.g.repo
	cond, err := operation.ParseS3ConditionalWrites(f.conditionalWrites)
	if err != nil && (strings.HasPrefix(st.URI, "s3:") || strings.HasPrefix(st.URI, "b2:")) {
		return operation.StoreOptions{}, usageErr("-s3-conditional-writes (env CLOUDSTIC_S3_CONDITIONAL_WRITES) %v", err)
	}
	if err := a.g.timeouts.check(); err != nil && !isLocal(a.g.repo.URI) {
		return operation.StoreOptions{}, err
	}
	o := operation.StoreOptions{
		URI:    a.g.repo.URI,
		Create: forInit,
		S3: operation.S3Config{ConditionalWrites: cond, Endpoint: st.S3Endpoint, Region: st.S3Region, Profile: st.S3Profile,
			AccessKey: st.S3AccessKey, SecretKey: st.S3SecretKey,
			ConnectTimeout: a.g.timeouts.connect, ResponseTimeout: a.g.timeouts.response},
		B2:          operation.B2Options{KeyID: st.B2KeyID, AppKey: st.B2AppKey, Region: f.b2Region},
		SFTP:        a.sftpConfig(),
		Connections: a.g.storeConns,
		TestWrapper: a.io.TestStoreWrapper,
	}
	if a.g.debug {
		o.Logf = a.debugf
	}
	if a.g.verbose && !a.g.quiet {
		// With -verbose a store riding out an outage says so (each
		// retry, reconnect and resumed read) without -debug's request
		// log. Not by default: a command that fails then still prints
		// one error line, not the outage it rode out before (the jepsen
		// test's rule).
		o.Notef = a.notef
	}
	return o, nil
}

// sftpConfig is the authentication of sftp:// stores: the -store-sftp-*
// flags and what the environment gives: the login name ($USER) for URLs
// that name none, ~/.ssh/known_hosts when no -store-sftp-known-hosts was
// given, and the ssh-agent ($SSH_AUTH_SOCK).
func (a *app) sftpConfig() operation.SFTPConfig {
	st := a.g.repo
	cfg := operation.SFTPConfig{Config: sshconn.Config{User: a.io.Getenv("USER"), KeyFile: st.StoreSFTPKey, Password: st.StoreSFTPPassword,
		KnownHostsFile: st.StoreSFTPKnownHosts, InsecureIgnoreHostKey: a.g.sftpInsecure, AgentSocket: a.io.Getenv("SSH_AUTH_SOCK"),
		ConnectTimeout: a.g.timeouts.connect, ResponseTimeout: a.g.timeouts.response}}
	if home := a.io.Getenv("HOME"); cfg.KnownHostsFile == "" && home != "" {
		cfg.KnownHostsFile = filepath.Join(home, ".ssh", "known_hosts")
	}
	return cfg
}
