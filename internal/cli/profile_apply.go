package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

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

// afterParse runs once a command's flags are parsed: it records which
// flags the command line gave, applies -profile (or the store of `store
// verify|init`) to the settings the command line left alone, and reads
// the password from wherever it was pointed to. The command line wins over
// the profile, and the profile over the environment.
func (a *app) afterParse(ctx context.Context, fs *flag.FlagSet) error {
	a.explicit = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { a.explicit[f.Name] = true })
	if a.g.prof.storeCmd && a.g.prof.storeName == "" {
		return nil // storeArg calls again with the name
	}
	if a.explicit["password"] && a.warnPasswordFlag() {
		env := "CLOUDSTIC_PASSWORD"
		if a.role != "" {
			env = "CLOUDSTIC_FROM_PASSWORD"
		}
		a.warnf("%s on the command line can be read by other users of this machine (ps); use %s, %s, %s or %s",
			a.flagName("password"), a.flagName("password-file"), a.flagName("password-command"), a.flagName("password-ref"), env)
	}
	if a.g.prof.all {
		if a.explicit["profile"] {
			return usageErr("give -profile NAME or -all-profiles, not both")
		}
		return nil // each profile's run applies its own (forProfile)
	}
	return a.applyProfile(ctx)
}

// warnPasswordFlag says whether to warn about a -password on the
// command line: once a run (copy's and -all-profiles' apps share the
// record), not with -quiet, and only where a person reads it: stderr is a
// terminal, or -verbose asked (not with -json, whose readers take stderr
// along). Scripts, which Cloudstic never warned, see nothing.
func (a *app) warnPasswordFlag() bool {
	if a.g.quiet || !(a.stderrIsTerminal() || (a.g.verbose && !a.g.json)) {
		return false
	}
	return a.io.warned == nil || a.io.warned.add("-"+a.role+"password flag")
}

// stderrIsTerminal reports whether stderr is a terminal.
func (a *app) stderrIsTerminal() bool {
	f, ok := a.io.Stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// applyProfile applies the store of -profile (or of `store verify|init`)
// to the settings the command line left alone (a.explicit), and reads the
// password.
func (a *app) applyProfile(ctx context.Context) error {
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
		if err := a.applyStore(ctx, st); err != nil {
			return err
		}
	}
	return a.readPassword(ctx, st)
}

// forProfile returns the app of one profile's run within this one
// (backup -all-profiles, the dashboard of -all-profiles): this run's
// settings, with the profile's store applied to those the command line
// left alone and its password read, as -profile NAME would.
func (a *app) forProfile(ctx context.Context, name string) (*app, error) {
	sub := &app{io: a.io, cmd: a.cmd, ctx: ctx, g: a.g, history: a.history, explicit: a.explicit, role: a.role, onProgress: a.onProgress}
	sub.g.prof.all, sub.g.prof.profile = false, name
	return sub, sub.applyProfile(ctx)
}

// applyStore sets the store's settings (config.StoreSettings) the command
// line left alone, reading *_secret references. The password and keys,
// which an entry holds only as references, are readPassword's.
func (a *app) applyStore(ctx context.Context, s *config.Store) error {
	for _, t := range config.StoreSettings {
		plain := t.Value(s)
		if plain == nil || a.explicit[t.Flag] {
			continue
		}
		v := *plain
		if ref := t.Ref(s); ref != nil && *ref != "" {
			var err error
			if v, err = a.resolveSecret(ctx, *ref); err != nil {
				return fmt.Errorf("%s: %w", t.RefKey, err)
			}
		}
		if v != "" {
			*a.g.setting(t) = v
		}
	}
	return nil
}

// readPassword fills in the password from -password-file,
// -password-command, -password-ref or the store's password_secret (and the
// keys from their *_secret fields). At most one of them may be given on
// the command line; there the command line wins, then the profile, then
// the environment.
func (a *app) readPassword(ctx context.Context, st *config.Store) error {
	explicit := a.explicit
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
