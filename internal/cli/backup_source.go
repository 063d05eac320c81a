package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/sftp"
	"github.com/cloudstic/cloudstic/internal/sshconn"
)

// sourceFlags are backup's -source (repeatable), -files-from* and the
// logins of sftp:// sources.
type sourceFlags struct {
	uris                      multiFlag
	from                      filesFromFlags
	key, password, knownHosts string
	insecure                  bool
}

func (f *sourceFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.Var(&f.uris, "source", "what to back up: PATH or local:PATH, sftp://[user@]host[:port]/path, gdrive[-changes][://DRIVE][/PATH] or onedrive[-changes][://DRIVE][/PATH] (repeatable: several local paths in one snapshot)")
	f.from.register(fs)
	fs.StringVar(&f.key, "source-sftp-key", getenv("CLOUDSTIC_SOURCE_SFTP_KEY"), "SSH private key file of an sftp:// source (env CLOUDSTIC_SOURCE_SFTP_KEY; default: ssh-agent)")
	fs.StringVar(&f.password, "source-sftp-password", getenv("CLOUDSTIC_SOURCE_SFTP_PASSWORD"), "SSH password of an sftp:// source (env CLOUDSTIC_SOURCE_SFTP_PASSWORD)")
	fs.StringVar(&f.knownHosts, "source-sftp-known-hosts", getenv("CLOUDSTIC_SOURCE_SFTP_KNOWN_HOSTS"), "known_hosts file of an sftp:// source (env CLOUDSTIC_SOURCE_SFTP_KNOWN_HOSTS; default ~/.ssh/known_hosts)")
	fs.BoolVar(&f.insecure, "source-sftp-insecure", false, "INSECURE: accept any SSH host key of an sftp:// source")
}

// sourcePaths reads -source and -files-from*: one directory to back up as
// the snapshot's tree (path, with the server's login for an sftp://
// source, nil for local:PATH), or several local files and directories
// (paths) stored under their absolute paths.
func (a *app) sourcePaths(f *sourceFlags) (path string, paths []string, login *sshconn.Config, err error) {
	if len(f.uris) == 1 && !f.from.given() {
		path, login, err = a.sourcePath(f, f.uris[0])
		return path, nil, login, err
	}
	if len(f.uris) == 0 && !f.from.given() {
		return "", nil, nil, usageErr("-source is required, e.g. -source local:~/Documents")
	}
	for _, uri := range f.uris {
		p, login, err := a.sourcePath(f, uri)
		if err != nil {
			return "", nil, nil, err
		}
		if login != nil {
			return "", nil, nil, usageErr("-source %s: only local:PATH sources can be combined with others or with -files-from", uri)
		}
		paths = append(paths, p)
	}
	more, err := f.from.paths(a.io.Stdin, a.warnf)
	if err != nil {
		return "", nil, nil, err
	}
	paths = append(paths, more...)
	if len(paths) == 0 {
		return "", nil, nil, usageErr("-files-from: the lists name no file to back up")
	}
	return "", paths, nil, nil
}

// sourcePath reads one -source: the path to back up, and for an sftp://
// source the server's login (nil for local:PATH). "~/" of a local path is
// $HOME.
func (a *app) sourcePath(f *sourceFlags, uri string) (string, *sshconn.Config, error) {
	switch {
	case uri == "":
		return "", nil, usageErr("-source is required, e.g. -source local:~/Documents")
	case strings.HasPrefix(uri, "sftp://"):
		cfg, p, err := sshconn.ParseURL(uri)
		if err != nil {
			return "", nil, usageErr("-source %v", err)
		}
		if cfg.User == "" {
			cfg.User = a.io.Getenv("USER")
		}
		cfg.KeyFile, cfg.Password, cfg.KnownHostsFile = f.key, f.password, f.knownHosts
		cfg.InsecureIgnoreHostKey, cfg.AgentSocket, cfg.FlagPrefix = f.insecure, a.io.Getenv("SSH_AUTH_SOCK"), "-source-sftp"
		if home := a.io.Getenv("HOME"); cfg.KnownHostsFile == "" && home != "" {
			cfg.KnownHostsFile = filepath.Join(home, ".ssh", "known_hosts")
		}
		cfg.ConnectTimeout, cfg.ResponseTimeout = a.g.timeouts.connect, a.g.timeouts.response
		return p, &cfg, nil
	}
	// A plain path means local:PATH, as -store takes one (operation.IsLocal:
	// a path with a colon starts with / or ., or is a Windows drive path).
	path, ok := strings.CutPrefix(uri, "local:")
	if !ok && !operation.IsLocal(uri) {
		return "", nil, usageErr("-source %q: want a path, local:PATH or sftp://[user@]host[:port]/path", uri)
	}
	if strings.HasPrefix(path, "~/") {
		if home := a.io.Getenv("HOME"); home != "" {
			path = filepath.Join(home, path[2:])
		}
	}
	return path, nil, nil
}

// openSource connects to an sftp:// source (cfg nil: the local file
// system, nothing to open). The caller closes what it returns.
func openSource(ctx context.Context, uri string, cfg *sshconn.Config) (source.Source, error) {
	if cfg == nil {
		return nil, nil
	}
	src, err := sftp.Open(ctx, *cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot back up %s: %w", uri, err)
	}
	return src, nil
}
