package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/config"
)

// profileFlags are the global flags that pick a profile and the ways to
// give a password without putting it on the command line.
type profileFlags struct {
	profile         string
	all             bool
	profilesFile    string
	passwordRef     string
	passwordFile    string
	passwordCommand string

	// storeName, set by `store verify|init`, applies one store entry
	// as -profile applies a profile's; storeCmd defers afterParse until
	// the name is known.
	storeName string
	storeCmd  bool
	// inner marks a run started by this package for one profile of
	// -all-profiles, or the backup half of a profile with retention.
	inner bool
}

func (f *profileFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.profile, "profile", "", "take the store (and, for backup, the source and options) from this profile of profiles.yaml")
	switch fs.Name() {
	case "backup":
		fs.BoolVar(&f.all, "all-profiles", false, "back up every enabled profile, one after the other")
	case "ui":
		fs.BoolVar(&f.all, "all-profiles", false, "show the store of every enabled profile, with each profile's runs")
	}
	fs.StringVar(&f.profilesFile, "profiles-file", getenv("CLOUDSTIC_PROFILES_FILE"), "profiles file (env CLOUDSTIC_PROFILES_FILE; default <config dir>/profiles.yaml)")
	fs.StringVar(&f.passwordRef, "password-ref", getenv("CLOUDSTIC_PASSWORD_REF"), "read the password from a secret reference: env://VAR, file:///path, config-token://P/N, secret-service://C/I (env CLOUDSTIC_PASSWORD_REF)")
	fs.StringVar(&f.passwordFile, "password-file", getenv("CLOUDSTIC_PASSWORD_FILE"), "read the password from this file, which only its owner may read (env CLOUDSTIC_PASSWORD_FILE)")
	fs.StringVar(&f.passwordCommand, "password-command", getenv("CLOUDSTIC_PASSWORD_COMMAND"), "read the password from the output of this shell command (env CLOUDSTIC_PASSWORD_COMMAND)")
}

// loadProfiles loads the profiles file -profiles-file names.
func (a *app) loadProfiles() (*config.File, error) {
	path, err := config.ProfilesPath(a.g.prof.profilesFile, a.io.Getenv)
	if err != nil {
		return nil, err
	}
	f, err := config.Load(path)
	if errors.Is(err, errNotExist) {
		return nil, fmt.Errorf("no profiles file at %s (create one with 'cloudstic store new' and 'cloudstic profile new')", path)
	}
	if err == nil {
		a.warnExposure(f)
	}
	return f, err
}

// warnExposure warns, once a run, when other users of this machine may
// read the literal secrets in the profiles file or change it. It warns and
// goes on rather than refusing as ssh does with a private key: a refusal
// would stop scheduled backups until someone reads the message, and a
// readable file of secrets is better fixed than made to cost backups.
func (a *app) warnExposure(f *config.File) {
	msg := f.Exposure()
	if msg == "" || (a.io.warned != nil && !a.io.warned.add(f.Path)) {
		return
	}
	a.warnf("%s", msg)
}

// resolver reads secret references for this run.
func (a *app) resolver() *config.Resolver {
	dir, err := config.Dir(a.io.Getenv)
	if err != nil {
		dir = "" // config-token:// then fails with a clear error of its own
	}
	return &config.Resolver{Getenv: a.io.Getenv, ConfigDir: dir}
}

// afterParse runs once a command's flags are parsed: it applies -profile
// (or the store of `store verify|init`) to flags not given on the command
// line, and reads the password from wherever it was pointed to. The
// command line wins over the profile, and the profile over the
// environment.
func (a *app) afterParse(ctx context.Context, fs *flag.FlagSet) error {
	if a.g.prof.storeCmd && a.g.prof.storeName == "" {
		return nil // storeArg calls again with the name
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if explicit["password"] && !a.g.quiet {
		env := "CLOUDSTIC_PASSWORD"
		if a.role != "" {
			env = "CLOUDSTIC_FROM_PASSWORD"
		}
		a.warnf("%s on the command line can be read by other users of this machine (ps); use %s, %s, %s or %s",
			a.flagName("password"), a.flagName("password-file"), a.flagName("password-command"), a.flagName("password-ref"), env)
	}
	if a.g.prof.all {
		if explicit["profile"] {
			return usageErr("give -profile NAME or -all-profiles, not both")
		}
		return nil // each profile's run applies its own
	}
	var st *config.Store
	switch {
	case a.g.prof.profile != "":
		f, err := a.loadProfiles()
		if err != nil {
			return err
		}
		p, err := f.Profile(a.g.prof.profile)
		if err != nil {
			return err
		}
		if p.Store != "" {
			s := f.Stores[p.Store]
			st = &s
		}
		if a.cmd.name == "backup" {
			if err := applyJob(fs, explicit, a.g.prof.profile, p); err != nil {
				return err
			}
		}
	case a.g.prof.storeName != "":
		f, err := a.loadProfiles()
		if err != nil {
			return err
		}
		s, err := f.Store(a.g.prof.storeName)
		if err != nil {
			return err
		}
		st = &s
	}
	if st != nil {
		if err := a.applyStore(ctx, fs, explicit, st); err != nil {
			return err
		}
	}
	return a.readPassword(ctx, explicit, st)
}

// storeFlags maps store fields to the global flags they set.
func storeFlags(s *config.Store) []struct{ flag, key, value, ref string } {
	return []struct{ flag, key, value, ref string }{
		{"store", "uri", s.URI, ""},
		{"s3-endpoint", "s3_endpoint", s.S3Endpoint, ""},
		{"s3-region", "s3_region", s.S3Region, ""},
		{"s3-profile", "s3_profile", s.S3Profile, ""},
		{"s3-access-key", "s3_access_key", s.S3AccessKey, s.S3AccessKeySecret},
		{"s3-secret-key", "s3_secret_key", s.S3SecretKey, s.S3SecretKeySecret},
		{"b2-key-id", "b2_key_id", s.B2KeyID, s.B2KeyIDSecret},
		{"b2-app-key", "b2_app_key", s.B2AppKey, s.B2AppKeySecret},
		{"store-sftp-password", "store_sftp_password", s.StoreSFTPPassword, s.StoreSFTPPasswordSecret},
		{"store-sftp-key", "store_sftp_key", s.StoreSFTPKey, s.StoreSFTPKeySecret},
		{"store-sftp-known-hosts", "store_sftp_known_hosts", s.StoreSFTPKnownHosts, ""},
		{"kms-key-arn", "kms_key_arn", s.KMSKeyARN, ""},
		{"kms-region", "kms_region", s.KMSRegion, ""},
		{"kms-endpoint", "kms_endpoint", s.KMSEndpoint, ""},
	}
}

// applyStore sets the store's fields on flags the command line left alone,
// reading *_secret references.
func (a *app) applyStore(ctx context.Context, fs *flag.FlagSet, explicit map[string]bool, s *config.Store) error {
	for _, m := range storeFlags(s) {
		if explicit[m.flag] || (m.value == "" && m.ref == "") {
			continue
		}
		v := m.value
		if m.ref != "" {
			var err error
			if v, err = a.resolveSecret(ctx, m.ref); err != nil {
				return fmt.Errorf("%s_secret: %w", m.key, err)
			}
		}
		if fs.Lookup(m.flag) == nil {
			return fmt.Errorf("the profile's store sets %s, which this build does not support", m.key)
		}
		if err := fs.Set(m.flag, v); err != nil {
			return usageErr("store field %s: %v", m.key, err)
		}
	}
	return nil
}

// applyJob sets a profile's backup options on flags the command line left
// alone.
func applyJob(fs *flag.FlagSet, explicit map[string]bool, name string, p config.Profile) error {
	if p.CloudDrive() {
		return fmt.Errorf("profile %s backs up a cloud drive (source %q): cloud-drive sources need their providers' OAuth services and are not supported here; the profile is kept in profiles.yaml but cannot run", name, p.Source)
	}
	set := func(flagName, key string, values ...string) error {
		if explicit[flagName] {
			return nil
		}
		if fs.Lookup(flagName) == nil {
			return fmt.Errorf("profile %s sets %s, which this build's backup does not support", name, key)
		}
		for _, v := range values {
			if err := fs.Set(flagName, v); err != nil {
				return usageErr("profile %s: %s: %v", name, key, err)
			}
		}
		return nil
	}
	var err error
	add := func(flagName, key string, values ...string) {
		if err == nil && len(values) > 0 && (len(values) > 1 || values[0] != "") {
			err = set(flagName, key, values...)
		}
	}
	add("source", "source", p.Source)
	add("tag", "tags", p.Tags...)
	add("exclude", "excludes", p.Excludes...)
	add("exclude-file", "exclude_file", p.ExcludeFile)
	add("volume-uuid", "volume_uuid", p.VolumeUUID)
	if p.IgnoreEmpty {
		add("ignore-empty-snapshot", "ignore_empty", "true")
	}
	return err
}

// readPassword fills in the password from -password-file,
// -password-command, -password-ref or the store's password_secret (and the
// keys from their *_secret fields). At most one of them may be given on
// the command line; there the command line wins, then the profile, then
// the environment.
func (a *app) readPassword(ctx context.Context, explicit map[string]bool, st *config.Store) error {
	var given []string
	for _, f := range []string{"password", "password-file", "password-command", "password-ref"} {
		if explicit[f] {
			given = append(given, a.flagName(f))
		}
	}
	if len(given) > 1 {
		return usageErr("give only one of %s", strings.Join(given, ", "))
	}
	if st != nil && !explicit["encryption-key"] && st.EncryptionKeySecret != "" {
		v, err := a.resolveSecret(ctx, st.EncryptionKeySecret)
		if err != nil {
			return fmt.Errorf("encryption_key_secret: %w", err)
		}
		a.g.encryptionKey = v
	}
	if st != nil && !explicit["recovery-key"] && st.RecoveryKeySecret != "" {
		v, err := a.resolveSecret(ctx, st.RecoveryKeySecret)
		if err != nil {
			return fmt.Errorf("recovery_key_secret: %w", err)
		}
		a.g.recoveryKey = v
	}
	p := &a.g.prof
	source := ""
	switch {
	case explicit["password"]:
		return nil
	case explicit["password-file"]:
		source = "file"
	case explicit["password-command"]:
		source = "command"
	case explicit["password-ref"]:
		source = "ref"
	case st != nil && st.PasswordSecret != "":
		p.passwordRef, source = st.PasswordSecret, "ref"
	case p.passwordRef != "":
		source = "ref"
	case p.passwordFile != "":
		source = "file"
	case p.passwordCommand != "":
		source = "command"
	default:
		return nil
	}
	var err error
	switch source {
	case "file":
		a.g.password, err = a.resolveSecret(ctx, "file://"+absPath(p.passwordFile))
		if err != nil {
			err = fmt.Errorf("-password-file: %w", err)
		}
	case "command":
		a.g.password, err = runPasswordCommand(ctx, p.passwordCommand, a.childEnv(), a.io)
	case "ref":
		a.g.password, err = a.resolveSecret(ctx, p.passwordRef)
		if err != nil {
			err = fmt.Errorf("password: %w", err)
		}
	}
	return err
}
