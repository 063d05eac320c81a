package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/awsconf"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
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

// bucketPrefix splits "BUCKET[/PREFIX]".
func bucketPrefix(scheme, rest string) (string, string, error) {
	bucket, prefix, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", usageErr("-store %s: needs a bucket name, e.g. %s:my-bucket/backups", scheme, scheme)
	}
	return bucket, strings.Trim(prefix, "/"), nil
}

// credentialHint says how to give an s3: or b2: store credentials.
func credentialHint(scheme string) string {
	if scheme == "b2" {
		return "give -b2-key-id and -b2-app-key (or B2_KEY_ID and B2_APP_KEY), or a profile's s3_access_key_secret/s3_secret_key_secret"
	}
	return "give AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, -s3-profile, -s3-access-key and -s3-secret-key, or a profile's s3_access_key_secret/s3_secret_key_secret"
}

// isLocal reports whether a -store value names a local directory: local:PATH,
// or a plain path (one with a colon only when it starts with / or .).
// openBackend opens exactly these as local stores.
func isLocal(store string) bool {
	if strings.HasPrefix(store, "local:") {
		return true
	}
	if strings.Contains(store, "://") {
		return false
	}
	return !strings.Contains(store, ":") || strings.HasPrefix(store, "/") || strings.HasPrefix(store, ".")
}

// openBackend opens the store -store names.
func (a *app) openBackend(ctx context.Context, forInit bool) (store.Store, error) {
	uri := a.g.store
	var logf func(string, ...any)
	if a.g.debug {
		logf = a.debugf
	}
	switch {
	case strings.HasPrefix(uri, "local:"):
		return openLocal(strings.TrimPrefix(uri, "local:"), forInit)
	case strings.HasPrefix(uri, "s3:"), strings.HasPrefix(uri, "b2:"):
		scheme := uri[:2]
		bucket, prefix, err := bucketPrefix(scheme, uri[3:])
		if err != nil {
			return nil, err
		}
		f := a.g.s3
		cond, err := s3.ParseConditionalWrites(f.conditionalWrites)
		if err != nil {
			return nil, usageErr("-s3-conditional-writes (env CLOUDSTIC_S3_CONDITIONAL_WRITES) %v", err)
		}
		cfg := s3.Config{ConditionalWrites: cond, Bucket: bucket, Prefix: prefix, Endpoint: f.endpoint, Region: f.region, Profile: f.profile,
			AccessKey: f.accessKey, SecretKey: f.secretKey, MaxConnections: a.g.storeConns, Logf: logf}
		if scheme == "b2" {
			cfg.Flavor = s3.FlavorB2
			cfg.Region = f.b2Region
			if f.b2KeyID != "" {
				cfg.AccessKey, cfg.SecretKey = f.b2KeyID, f.b2AppKey
			}
		}
		st, err := s3.Open(ctx, cfg)
		if errors.Is(err, awsconf.ErrNoCredentials) {
			return nil, fmt.Errorf("opening %s: %w: %s", uri, err, credentialHint(scheme))
		}
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", uri, err)
		}
		return st, nil
	case strings.HasPrefix(uri, "sftp://"):
		cfg, err := sftp.ParseURL(uri)
		if err != nil {
			return nil, usageErr("-store %s: %v", uri, err)
		}
		f := a.g.sftp
		cfg.KeyFile, cfg.Password, cfg.KnownHostsFile, cfg.InsecureIgnoreHostKey = f.key, f.password, f.knownHosts, f.insecure
		a.sftpEnvDefaults(&cfg)
		cfg.CreateDir = forInit
		cfg.Logf = logf
		st, err := sftp.Open(ctx, cfg)
		if errors.Is(err, sftp.ErrNoRepositoryDir) {
			return nil, fmt.Errorf("%w at %s (the remote directory does not exist): run 'cloudstic init'", errNoRepository, uri)
		}
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", uri, err)
		}
		return st, nil
	case !isLocal(uri):
		return nil, usageErr("-store %q: unknown store type (want local:PATH, s3:BUCKET, b2:BUCKET or sftp://host/path)", uri)
	default:
		return openLocal(uri, forInit)
	}
}

// sftpEnvDefaults fills in what the environment gives an SFTP store: the
// login name ($USER) when the URL names none, ~/.ssh/known_hosts when no
// -store-sftp-known-hosts was given, and the ssh-agent ($SSH_AUTH_SOCK).
func (a *app) sftpEnvDefaults(cfg *sftp.Config) {
	if cfg.User == "" {
		cfg.User = a.io.Getenv("USER")
	}
	if home := a.io.Getenv("HOME"); cfg.KnownHostsFile == "" && home != "" {
		cfg.KnownHostsFile = filepath.Join(home, ".ssh", "known_hosts")
	}
	cfg.AgentSocket = a.io.Getenv("SSH_AUTH_SOCK")
}

func openLocal(dir string, forInit bool) (store.Store, error) {
	if dir == "" {
		return nil, usageErr("-store local: needs a path, e.g. local:./backup_store")
	}
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("store path %s is not a directory", dir)
	case errors.Is(err, os.ErrNotExist) && !forInit:
		return nil, fmt.Errorf("%w at local:%s: run 'cloudstic init'", errNoRepository, dir)
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	return local.New(dir), nil
}
